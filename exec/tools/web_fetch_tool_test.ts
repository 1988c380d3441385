import assert from "node:assert/strict";
import { mountTools, textOf, type ToolWorld } from "./_testing.ts";
import type { WebFetchHooks } from "./web_fetch_tool.ts";
import { parseIPv4, parseIPv6, refusal } from "./_web_floor.ts";

/** A public-looking address the fake resolver hands out; the test dialler carries it to the local server. */
const PUBLIC = "93.184.216.34";

interface Site extends AsyncDisposable {
  readonly port: number;
  readonly hosts: string[];
  readonly cancelled: string[];
}

/** A real HTTP server on 127.0.0.1:0 with the routes the tests fetch. */
function site(): Site {
  const hosts: string[] = [];
  const cancelled: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    hosts.push(req.headers.get("host") ?? "");
    switch (url.pathname) {
      case "/page":
        return new Response(
          "<html><head><title>The &amp; Page</title><style>p{}</style><script>alert(1)</script></head><body>" +
            "<h1>Heading</h1><p>Para with <a href='/rel'>a link</a> &mdash; done.</p>" +
            "<ul><li>one</li><li>two</li></ul><pre>  keep\n  this</pre></body></html>",
          { headers: { "content-type": "text/html; charset=utf-8" } },
        );
      case "/redirect-loopback":
        return new Response(null, {
          status: 302,
          headers: { location: `http://127.0.0.1:${url.port}/page` },
        });
      case "/redirect-same":
        return new Response(null, { status: 301, headers: { location: "/plain" } });
      case "/loop":
        return new Response(null, { status: 302, headers: { location: "/loop" } });
      case "/plain":
        return new Response("x".repeat(30) + "END", { headers: { "content-type": "text/plain" } });
      case "/gzip": {
        const body = await new Response(
          new Blob(["compressed hello"]).stream().pipeThrough(new CompressionStream("gzip")),
        ).arrayBuffer();
        return new Response(body, {
          headers: { "content-type": "text/plain", "content-encoding": "gzip" },
        });
      }
      case "/big":
        return new Response("y".repeat(100_000), { headers: { "content-type": "text/plain" } });
      case "/missing":
        return new Response("no such page", {
          status: 404,
          headers: { "content-type": "text/plain" },
        });
      case "/drip": {
        let timer: ReturnType<typeof setInterval> | undefined;
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            timer = setInterval(() => controller.enqueue(new Uint8Array([46])), 20);
          },
          cancel() {
            clearInterval(timer);
            cancelled.push("/drip");
          },
        });
        return new Response(body, { headers: { "content-type": "text/plain" } });
      }
      default:
        return new Response("?", { status: 500 });
    }
  });
  return {
    port: server.addr.port,
    hosts,
    cancelled,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

interface Dial {
  readonly address: string;
  readonly port: number;
}

function hooks(
  port: number,
  dials: Dial[],
  names: Record<string, string[][]>,
  real = false,
): WebFetchHooks {
  const calls = new Map<string, number>();
  return {
    resolve(name) {
      const answers = names[name] ?? [[]];
      const n = calls.get(name) ?? 0;
      calls.set(name, n + 1);
      return Promise.resolve(answers[Math.min(n, answers.length - 1)]!);
    },
    connect(address, _port, signal) {
      dials.push({ address, port: _port });
      // Production dials the checked address; the test carries the public stand-in to the local server.
      return Deno.connect({
        hostname: real ? address : "127.0.0.1",
        port: real ? _port : port,
        signal,
      });
    },
  };
}

async function world(
  s: Site,
  dials: Dial[],
  config: Record<string, unknown>,
  names: Record<string, string[][]> = {},
  real = false,
): Promise<ToolWorld> {
  return await mountTools({
    std: { web_fetch: config },
    hooks: { webFetch: hooks(s.port, dials, names, real) },
  });
}

async function fetchText(w: ToolWorld, url: string, extra: Record<string, unknown> = {}) {
  const result = await w.call("WebFetch", { url, prompt: "summarize", ...extra });
  return [result.is_error, textOf(result)] as const;
}

Deno.test("WebFetch SSRF battery: every local spelling is refused before anything is dialled", async () => {
  await using s = site();
  const dials: Dial[] = [];
  await using w = await world(s, dials, { allow_domains: ["*"] }, {
    "evil.example": [["127.0.0.1"]],
  }, true);
  const P = s.port;
  const floor = "WebFetch refuses local, private and special-purpose addresses";
  const cases: [string, string][] = [
    [`http://127.0.0.1:${P}/page`, `127.0.0.1 is a loopback (127.0.0.0/8) address; ${floor}`],
    [
      `http://localhost:${P}/page`,
      `"localhost" names this machine (loopback); WebFetch never fetches local addresses`,
    ],
    [`http://[::1]:${P}/page`, `0:0:0:0:0:0:0:1 is a loopback (::1) address; ${floor}`],
    [`http://0.0.0.0:${P}/page`, `0.0.0.0 is a unspecified (0.0.0.0/8) address; ${floor}`],
    [
      "http://169.254.169.254/latest/meta-data/",
      `169.254.169.254 is a link-local (169.254.0.0/16, cloud metadata) address; ${floor}`,
    ],
    [`http://10.1.2.3:${P}/`, `10.1.2.3 is a private (10.0.0.0/8) address; ${floor}`],
    [`http://2130706433:${P}/page`, `127.0.0.1 is a loopback (127.0.0.0/8) address; ${floor}`],
    [`http://0x7f000001:${P}/page`, `127.0.0.1 is a loopback (127.0.0.0/8) address; ${floor}`],
    [`http://017700000001:${P}/page`, `127.0.0.1 is a loopback (127.0.0.0/8) address; ${floor}`],
    [`http://127.1:${P}/page`, `127.0.0.1 is a loopback (127.0.0.0/8) address; ${floor}`],
    [
      `http://[::ffff:127.0.0.1]:${P}/page`,
      `0:0:0:0:0:ffff:7f00:1 is a IPv4-mapped (::ffff:0:0/96) address; ${floor}`,
    ],
    [
      `http://evil.example:${P}/page`,
      `the name "evil.example" resolves to 127.0.0.1, a loopback (127.0.0.0/8) address; ${floor}`,
    ],
  ];
  for (const [url, why] of cases) {
    const normalized = new URL(url).href;
    assert.deepStrictEqual(await fetchText(w, url), [
      true,
      `Tool "WebFetch" failed: Cannot fetch "${normalized}": ${why}`,
    ], url);
  }
  assert.deepStrictEqual(dials, []);
  assert.deepStrictEqual(s.hosts, []);
});

Deno.test("WebFetch: a redirect from an allowed host to loopback is refused at the hop", async () => {
  await using s = site();
  const dials: Dial[] = [];
  await using w = await world(s, dials, { allow_domains: ["*"] }, { "docs.example": [[PUBLIC]] });
  assert.deepStrictEqual(await fetchText(w, `http://docs.example:${s.port}/redirect-loopback`), [
    true,
    `Tool "WebFetch" failed: Cannot fetch "http://127.0.0.1:${s.port}/page": 127.0.0.1 is a loopback ` +
    "(127.0.0.0/8) address; WebFetch refuses local, private and special-purpose addresses",
  ]);
  assert.deepStrictEqual(dials, [{ address: PUBLIC, port: s.port }]);
  assert.deepStrictEqual(s.hosts, [`docs.example:${s.port}`]);
});

Deno.test("WebFetch: deny by default, the allow list re-checked on a redirect, credentials and schemes refused", async () => {
  await using s = site();
  const dials: Dial[] = [];
  await using w = await world(s, dials, { allow_domains: ["docs.example"] }, {
    "docs.example": [[PUBLIC]],
  });
  await using none = await world(s, [], {});
  assert.deepStrictEqual(await fetchText(none, "https://example.com/"), [
    true,
    'Tool "WebFetch" failed: Cannot fetch "https://example.com/": the host "example.com" is not on WebFetch\'s ' +
    "allow list (the tools.std row's web_fetch.allow_domains)",
  ]);
  assert.deepStrictEqual(await fetchText(w, `http://sub.docs.example:${s.port}/`), [
    true,
    `Tool "WebFetch" failed: Cannot fetch "http://sub.docs.example:${s.port}/": the host "sub.docs.example" is ` +
    "not on WebFetch's allow list (the tools.std row's web_fetch.allow_domains)",
  ]);
  assert.deepStrictEqual(await fetchText(w, "ftp://docs.example/x"), [
    true,
    'Tool "WebFetch" failed: Cannot fetch "ftp://docs.example/x": only http and https URLs are fetched',
  ]);
  assert.deepStrictEqual(await fetchText(w, "http://user:pw@docs.example/x"), [
    true,
    'Tool "WebFetch" failed: Cannot fetch "http://docs.example": credentials in URLs are not sent',
  ]);
  // The redirect leads to 127.0.0.1, which is not on this allow list: the list is checked first, at the hop.
  assert.deepStrictEqual(await fetchText(w, `http://docs.example:${s.port}/redirect-loopback`), [
    true,
    `Tool "WebFetch" failed: Cannot fetch "http://127.0.0.1:${s.port}/page": the host "127.0.0.1" is not on ` +
    "WebFetch's allow list (the tools.std row's web_fetch.allow_domains)",
  ]);
});

Deno.test("WebFetch: the connection is pinned to the checked address (a rebinding second answer is never used)", async () => {
  await using s = site();
  const dials: Dial[] = [];
  await using w = await world(s, dials, { allow_domains: ["*.example"] }, {
    "rebind.example": [[PUBLIC], ["127.0.0.1"]],
    "mixed.example": [[PUBLIC, "10.0.0.5"]],
  });
  // One call resolves once and dials what it checked: a resolver (or DNS server) answering differently the
  // second time is never asked again by the connect, which is what fetch would do.
  const [isError, text] = await fetchText(w, `http://rebind.example:${s.port}/plain`);
  assert.deepStrictEqual([isError, text.split("\n")[0]], [
    false,
    `URL: http://rebind.example:${s.port}/plain`,
  ]);
  assert.deepStrictEqual(dials, [{ address: PUBLIC, port: s.port }]);
  // The next call (and every redirect hop) is checked afresh: the loopback answer is refused before dialling.
  assert.deepStrictEqual(await fetchText(w, `http://rebind.example:${s.port}/plain`), [
    true,
    `Tool "WebFetch" failed: Cannot fetch "http://rebind.example:${s.port}/plain": the name "rebind.example" ` +
    "resolves to 127.0.0.1, a loopback (127.0.0.0/8) address; WebFetch refuses local, private and " +
    "special-purpose addresses",
  ]);
  assert.deepStrictEqual(dials, [{ address: PUBLIC, port: s.port }]);
  assert.deepStrictEqual(await fetchText(w, `http://mixed.example:${s.port}/plain`), [
    true,
    `Tool "WebFetch" failed: Cannot fetch "http://mixed.example:${s.port}/plain": the name "mixed.example" ` +
    "resolves to 10.0.0.5, a private (10.0.0.0/8) address; WebFetch refuses local, private and special-purpose " +
    "addresses",
  ]);
});

Deno.test("WebFetch: HTML as readable text, the prompt echoed, the Host header the name's", async () => {
  await using s = site();
  const dials: Dial[] = [];
  await using w = await world(s, dials, { allow_domains: ["docs.example"] }, {
    "docs.example": [[PUBLIC]],
  });
  const base = `http://docs.example:${s.port}`;
  assert.deepStrictEqual(await fetchText(w, `${base}/page`), [
    false,
    [
      `URL: ${base}/page`,
      "Status: 200",
      "Content-Type: text/html; charset=utf-8",
      "Title: The & Page",
      "Prompt (not run through a model here; apply it to the text): summarize",
      "",
      "# Heading",
      "",
      `Para with [a link](${base}/rel) — done.`,
      "",
      "- one",
      "- two",
      "",
      "  keep",
      "  this",
    ].join("\n"),
  ]);
  assert.deepStrictEqual(s.hosts, [`docs.example:${s.port}`]);
  assert.deepStrictEqual(dials, [{ address: PUBLIC, port: s.port }]);
});

Deno.test("WebFetch: gzip, a 404, the body cap, offset paging, the redirect limit", async () => {
  await using s = site();
  await using w = await world(s, [], {
    allow_domains: ["docs.example"],
    max_bytes: 1000,
    max_chars: 20,
    max_redirects: 2,
  }, { "docs.example": [[PUBLIC]] });
  const base = `http://docs.example:${s.port}`;
  const body = (text: string) => text.split("\n\n").slice(1).join("\n\n");
  assert.equal(body((await fetchText(w, `${base}/gzip`))[1]), "compressed hello");
  const missing = await fetchText(w, `${base}/missing`);
  assert.deepStrictEqual([missing[0], missing[1].split("\n")[1]], [true, "Status: 404"]);
  assert.equal(
    body((await fetchText(w, `${base}/big`))[1]),
    "y".repeat(20) +
      "\n\n[the body was cut at 1000 bytes]\n\n[showing characters 0–20 of 1000; call again with offset 20 for more]",
  );
  assert.equal(body((await fetchText(w, `${base}/plain`, { offset: 25 }))[1]), "xxxxxEND");
  assert.deepStrictEqual(await fetchText(w, `${base}/loop`), [
    true,
    `Tool "WebFetch" failed: Cannot fetch "${base}/loop": more than 2 redirects`,
  ]);
});

Deno.test("WebFetch: a slow-drip server ends at the total deadline", async () => {
  await using s = site();
  await using w = await world(s, [], { allow_domains: ["docs.example"], timeout_ms: 300 }, {
    "docs.example": [[PUBLIC]],
  });
  assert.deepStrictEqual(await fetchText(w, `http://docs.example:${s.port}/drip`), [
    true,
    `Tool "WebFetch" failed: Cannot fetch "http://docs.example:${s.port}/drip": no complete answer within 300 ms ` +
    "(WebFetch's total deadline)",
  ]);
});

Deno.test("the floor's parsers: every IPv4 spelling, IPv6 forms, embedded IPv4 and the private switch", () => {
  const v4 = (text: string) => {
    const parsed = parseIPv4(text);
    return parsed === undefined ? undefined : [...parsed.bytes].join(".");
  };
  assert.deepStrictEqual(
    [
      "2130706433",
      "0x7f000001",
      "017700000001",
      "127.1",
      "0x7f.0.0.1",
      "0177.0.0.1",
      "1.2.3.4",
      "256.1.1.1",
      "1.2.3.4.5",
      "0x",
      "08",
    ]
      .map(v4),
    [
      "127.0.0.1",
      "127.0.0.1",
      "127.0.0.1",
      "127.0.0.1",
      "127.0.0.1",
      "127.0.0.1",
      "1.2.3.4",
      undefined,
      undefined,
      "0.0.0.0",
      undefined,
    ],
  );
  const why = (text: string, block = true) => refusal(parseIPv6(text) ?? parseIPv4(text)!, block);
  assert.deepStrictEqual(
    [
      why("[::1]"),
      why("::"),
      why("fe80::1%eth0"),
      why("::ffff:10.0.0.1"),
      why("64:ff9b::7f00:1"),
      why("2002:7f00:1::"),
      why("fd00::1"),
      why("fd00::1", false),
      why("192.168.1.1", false),
      why("2606:4700::1111"),
      why("8.8.8.8"),
    ],
    [
      "loopback (::1)",
      "unspecified (::)",
      "link-local (fe80::/10)",
      "IPv4-mapped (::ffff:0:0/96)",
      "loopback (127.0.0.0/8), embedded in IPv6",
      "loopback (127.0.0.0/8), embedded in IPv6",
      "unique local (fc00::/7)",
      undefined,
      undefined,
      undefined,
      undefined,
    ],
  );
});

const hasOpenssl = await new Deno.Command("openssl", {
  args: ["version"],
  stdout: "null",
  stderr: "null",
})
  .output().then((out) => out.success, () => false);

/** A throwaway CA and a leaf certificate for `name`, made with openssl. */
async function certificates(name: string): Promise<{ ca: string; cert: string; key: string }> {
  const dir = await Deno.makeTempDir({ prefix: "terret-tls-" });
  const run = async (...args: string[]) => {
    const out = await new Deno.Command("openssl", {
      args,
      cwd: dir,
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  };
  try {
    await run(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
      "-days",
      "1",
      "-subj",
      "/CN=test ca",
    );
    await run(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      "key.pem",
      "-out",
      "leaf.csr",
      "-subj",
      `/CN=${name}`,
    );
    await Deno.writeTextFile(
      `${dir}/ext.cnf`,
      `subjectAltName=DNS:${name}\nbasicConstraints=CA:FALSE\n`,
    );
    await run(
      "x509",
      "-req",
      "-in",
      "leaf.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "cert.pem",
      "-days",
      "1",
      "-extfile",
      "ext.cnf",
    );
    return {
      ca: await Deno.readTextFile(`${dir}/ca.pem`),
      cert: await Deno.readTextFile(`${dir}/cert.pem`),
      key: await Deno.readTextFile(`${dir}/key.pem`),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name:
    "WebFetch over https: pinned to the checked address, the certificate verified against the name",
  ignore: !hasOpenssl,
  async fn() {
    const tls = await certificates("secure.example");
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, cert: tls.cert, key: tls.key, onListen() {} },
      (req) =>
        new Response(`<p>tls host=${req.headers.get("host")}</p>`, {
          headers: { "content-type": "text/html" },
        }),
    );
    try {
      const dials: Dial[] = [];
      await using w = await mountTools({
        std: { web_fetch: { allow_domains: ["*.example"] } },
        hooks: {
          webFetch: {
            ...hooks(server.addr.port, dials, {
              "secure.example": [[PUBLIC]],
              "other.example": [[PUBLIC]],
            }),
            caCerts: [tls.ca],
          },
        },
      });
      const port = server.addr.port;
      assert.deepStrictEqual(await fetchText(w, `https://secure.example:${port}/`), [
        false,
        [
          `URL: https://secure.example:${port}/`,
          "Status: 200",
          "Content-Type: text/html",
          "Prompt (not run through a model here; apply it to the text): summarize",
          "",
          `tls host=secure.example:${port}`,
        ].join("\n"),
      ]);
      const wrong = await fetchText(w, `https://other.example:${port}/`);
      assert.deepStrictEqual(wrong, [
        true,
        `Tool "WebFetch" failed: Cannot fetch "https://other.example:${port}/": invalid peer certificate: ` +
        'certificate not valid for name "other.example"; certificate is only valid for DnsName("secure.example")',
      ]);
      assert.deepStrictEqual(dials, [{ address: PUBLIC, port }, { address: PUBLIC, port }]);
    } finally {
      await server.shutdown();
    }
  },
});
