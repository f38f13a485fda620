// A worker for lance-conformance (worker protocol 1, docs/drivers.md "Workers"):
// a reader and writer of the latest version of a Lance dataset, built on
// LanceDB for Node.js. Put your own implementation where LanceDB is called.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import * as lancedb from "@lancedb/lancedb";

// The CommonJS apache-arrow, the one LanceDB loads: its tables are not those of the ES module build.
const { Table, tableFromIPC, tableToIPC } = createRequire(import.meta.url)("apache-arrow");

// stdout carries responses only: anything logged goes to stderr.
console.log = console.info = console.warn = console.error;

// The write operations it performs (docs/drivers.md "Writing"), each one call of LanceDB's table API.
const WRITE_OPERATIONS = [
  "create", "append", "overwrite", "delete", "update", "upsert", "add-columns", "alter-columns", "drop-columns",
];

const packageJson = new URL("../package.json", import.meta.resolve("@lancedb/lancedb"));
const DRIVER = {
  protocol_version: 1,
  name: "example-latest-only",
  implementation: "example-latest-only", // names your expectations file
  version: JSON.parse(readFileSync(packageJson, "utf8")).version, // the exact release under test
  lance_version: null, // the Lance it embeds, when it can tell
  capabilities: ["list-versions", "read-latest", "write"], // no time-travel, describe, blobs, row-ids
  write_operations: WRITE_OPERATIONS, // no write-at-version: LanceDB writes on the latest version only
  data_storage_versions: ["2.0", "2.1", "2.2"], // what a create can ask for
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

function tableName(uri) {
  if (!names.has(uri)) {
    symlinkSync(resolve(uri), join(scratch, `t${names.size}.lance`), "dir");
    names.set(uri, `t${names.size}`);
  }
  return names.get(uri);
}

async function openTable(uri) {
  return (await lancedb.connect(scratch)).openTable(tableName(uri));
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

// LanceDB's words for a lost commit race: the Lance core's messages, after "lance error: ".
const CONFLICTS = [
  "Retryable commit conflict", "Too many concurrent writers", "Incompatible transaction", "Commit conflict for version",
];

async function write(request) {
  const op = request.operation;
  if (!WRITE_OPERATIONS.includes(op.kind)) {
    throw new Failure("unsupported", `this worker does not ${op.kind}`);
  }
  if ((op.read_version ?? null) !== null) {
    throw new Failure("unsupported", `writes on the latest version only, not on version ${op.read_version}`);
  }
  try {
    return { version: await commit(request.uri, op) };
  } catch (error) {
    const message = String(error?.message).replace(/^lance error: /, "");
    if (CONFLICTS.some((start) => message.startsWith(start))) {
      throw new Failure("conflict", error.message);
    }
    throw error;
  }
}

// One operation (conformance/schemas/write-operation.schema.json) through LanceDB; the version it
// committed. Rows come as the path of an Arrow IPC file; max_rows_per_file, a layout hint, is not used.
async function commit(uri, op) {
  if (op.kind === "create") {
    mkdirSync(uri, { recursive: true }); // the link to it needs a directory
    const storageOptions = {}; // how LanceDB takes a new table's settings
    if (op.data_storage_version) storageOptions.new_table_data_storage_version = op.data_storage_version;
    if (op.stable_row_ids) storageOptions.new_table_enable_stable_row_ids = "true";
    const db = await lancedb.connect(scratch, { storageOptions });
    return (await db.createTable(tableName(uri), rowsOf(op), { mode: "create" })).version();
  }
  const table = await openTable(uri);
  switch (op.kind) {
    case "append":
    case "overwrite":
      return (await table.add(rowsOf(op), { mode: op.kind })).version;
    case "delete":
      return (await table.delete(sqlWhere(op.where))).version;
    case "update": {
      const valuesSql = Object.fromEntries(op.values.map(([column, value]) => [column, sqlValue(value)]));
      const where = op.where ? { where: sqlWhere(op.where) } : {}; // no where: every row
      return (await table.update({ valuesSql, ...where })).version;
    }
    case "upsert": {
      const merge = table.mergeInsert(op.on).whenMatchedUpdateAll().whenNotMatchedInsertAll();
      return (await merge.execute(rowsOf(op))).version;
    }
    case "add-columns": {
      const sql = ({ source, offset }) => (offset ? `${sqlName(source)} + ${sqlValue(offset)}` : sqlName(source));
      const columns = op.columns.map((column) => ({ name: column.name, valueSql: sql(column) }));
      return (await table.addColumns(columns)).version;
    }
    case "alter-columns": {
      const change = ({ path, rename, nullable, data_type }) => ({ path, rename, nullable, dataType: data_type });
      return (await table.alterColumns(op.alterations.map(change))).version;
    }
    case "drop-columns":
      return (await table.dropColumns(op.columns)).version;
  }
}

function rowsOf(op) {
  return tableFromIPC(readFileSync(op.rows));
}

// A predicate, {"column", "op", "value"} or {"column", "op": "in", "values"}, as LanceDB's SQL filter.
function sqlWhere({ column, op, value, values }) {
  if (op === "in") return `${sqlName(column)} IN (${values.map(sqlValue).join(", ")})`;
  return `${sqlName(column)} ${op} ${sqlValue(value)}`;
}

// Back-quoted: LanceDB's SQL reads a double-quoted name as a string where it computes a column.
function sqlName(column) {
  return "`" + column.replaceAll("`", "``") + "`";
}

function sqlValue(value) {
  if (value === null) return "NULL";
  if (typeof value === "string") return `'${value.replaceAll("'", "''")}'`;
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  return String(value); // a number
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
  write: [["uri", "operation"], write],
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
    // The implementation's own error: it refuses the dataset or the operation.
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
