import assert from "node:assert/strict";
import { droppedLine, JobOutput } from "./_job_output.ts";

Deno.test("JobOutput appends in order and, past the cap, keeps the newest half behind a dropped-bytes line", async () => {
  const dir = await Deno.makeTempDir({ prefix: "terret-joboutput-" });
  try {
    const path = `${dir}/1.log`;
    const output = await JobOutput.create(path, 100);
    const encode = (text: string) => new TextEncoder().encode(text);
    await output.write(encode("a".repeat(60)));
    await output.write(encode("b".repeat(30)));
    assert.equal(await Deno.readTextFile(path), "a".repeat(60) + "b".repeat(30));
    // 90 + 20 > 100: the file becomes the last 50 bytes of everything, behind the line.
    await output.write(encode("c".repeat(20)));
    assert.equal(
      await Deno.readTextFile(path),
      droppedLine(60) + "b".repeat(30) + "c".repeat(20),
    );
    // A chunk larger than half the cap keeps only its own tail.
    await output.write(encode("d".repeat(70)));
    assert.equal(await Deno.readTextFile(path), droppedLine(60 + 50 + 20) + "d".repeat(50));
    // A cut inside a multi-byte character drops the broken part.
    // (81 bytes: the last 50 start on the second byte of an "é".)
    await output.write(encode("é".repeat(40) + "z"));
    const text = await Deno.readTextFile(path);
    assert.equal(text, droppedLine(130 + 82) + "é".repeat(24) + "z");
    assert.deepStrictEqual([output.written, output.dropped], [60 + 30 + 20 + 70 + 81, 212]);
    await output.close();
    await output.write(encode("after close"));
    assert.equal(await Deno.readTextFile(path), text);
    await assert.rejects(JobOutput.create(path, 100), Deno.errors.AlreadyExists);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
