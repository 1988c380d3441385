/** stub. @module */
/** x. */
export const X: number = 1;
