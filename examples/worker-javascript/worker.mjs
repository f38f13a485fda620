// A worker for lance-conformance (worker protocol 1, docs/drivers.md "Workers"):
// a reader of the latest version of a Lance dataset, built on LanceDB for
// Node.js. Put your own implementation where LanceDB is called.
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import * as lancedb from "@lancedb/lancedb";

// The CommonJS apache-arrow, the one LanceDB loads: its tables are not those of the ES module build.
const { Table, tableToIPC } = createRequire(import.meta.url)("apache-arrow");

// stdout carries responses only: anything logged goes to stderr.
console.log = console.info = console.warn = console.error;

const packageJson = new URL("../package.json", import.meta.resolve("@lancedb/lancedb"));
const DRIVER = {
  protocol_version: 1,
  name: "example-latest-only",
  implementation: "example-latest-only", // names your expectations file
  version: JSON.parse(readFileSync(packageJson, "utf8")).version, // the exact release under test
  lance_version: null, // the Lance it embeds, when it can tell
  capabilities: ["list-versions", "read-latest"], // no time-travel, describe, blobs, row-ids, write
  write_operations: [],
  data_storage_versions: [],
  unreported: [],
};

// An answer with a protocol error kind: bad-request, unsupported, refused, ...
class Failure extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

// LanceDB opens a table by name in a directory (DIR/NAME.lance): each dataset
// (a local path) is linked into a scratch directory under a name of its own.
const scratch = mkdtempSync(join(tmpdir(), "example-worker-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));
const names = new Map();

async function openTable(uri) {
  if (!names.has(uri)) {
    symlinkSync(resolve(uri), join(scratch, `t${names.size}.lance`), "dir");
    names.set(uri, `t${names.size}`);
  }
  return (await lancedb.connect(scratch)).openTable(names.get(uri));
}

function hello(request) {
  if (!request.protocol_versions.includes(1)) {
    throw new Failure("unsupported", "this worker speaks worker protocol version 1 only");
  }
  return { protocol_version: 1, driver: DRIVER };
}

async function versions(request) {
  const listed = await (await openTable(request.uri)).listVersions();
  return { versions: listed.map((entry) => Number(entry.version)).sort((a, b) => a - b) };
}

async function read(request) {
  const table = await openTable(request.uri);
  const latest = await table.version();
  if (request.version !== null && request.version !== latest) {
    throw new Failure("unsupported", `reads the latest version (${latest}) only, not ${request.version}`);
  }
  let rows = await table.query().toArrow();
  if (rows.batches.length === 0) {
    rows = new Table(await table.schema()); // LanceDB gives no columns with no rows: keep them
  }
  writeFileSync(request.output, tableToIPC(rows, "file"));
  return { num_rows: rows.numRows };
}

function unsupported(request) {
  throw new Failure("unsupported", `this worker does not ${request.request}`);
}

let serving = true;

function shutdown() {
  serving = false; // the loop ends once the answer is out
  return {};
}

// Each request: the fields it must carry, and its handler.
const REQUESTS = {
  hello: [["protocol_versions"], hello],
  versions: [["uri"], versions],
  read: [["uri", "version", "output"], read],
  describe: [["uri", "version"], unsupported],
  write: [["uri", "operation"], unsupported],
  shutdown: [[], shutdown],
};

async function answer(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    return { id: null, error: { kind: "bad-request", message: `not JSON: ${error.message}` } };
  }
  const id = Number.isInteger(request?.id) ? request.id : null;
  const known = Object.hasOwn(REQUESTS, request?.request) ? REQUESTS[request.request] : null;
  if (known === null) {
    return { id, error: { kind: "bad-request", message: `unknown request ${JSON.stringify(request?.request)}` } };
  }
  const [fields, handler] = known;
  const missing = fields.filter((field) => !(field in request));
  if (missing.length > 0) {
    return { id, error: { kind: "bad-request", message: `${request.request} needs ${missing.join(", ")}` } };
  }
  try {
    return { id, result: await handler(request) };
  } catch (error) {
    if (error instanceof Failure) {
      return { id, error: { kind: error.kind, message: error.message } };
    }
    // The implementation's own error: it refuses the dataset.
    return { id, error: { kind: "refused", message: String(error?.message ?? error), type: error?.name } };
  }
}

// One request a line, one response a line, in order.
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() === "") continue;
  const response = await answer(line);
  process.stdout.write(JSON.stringify(response) + "\n");
  if (!serving) break;
}
process.exit(0); // after shutdown or at the end of input
