// The lancedb-node worker: LanceDB for Node.js (@lancedb/lancedb) answering
// the suite's worker protocol, version 1 (docs/drivers.md, "Workers"; JSON
// Schema conformance/schemas/worker-protocol.schema.json): one request a line
// on stdin, one response a line on stdout. Anything else the process prints
// goes to stderr, so the protocol channel carries responses only.
//
// The packages live where the set-up step installed them
// (conformance/drivers/lancedb_node.py): LANCE_CONFORMANCE_NODE_HOME names the
// directory whose node_modules hold @lancedb/lancedb and apache-arrow. The Lance
// version LanceDB embeds is measured by the set-up step (the writer version of
// a table this worker wrote) and handed over in LANCE_CONFORMANCE_LANCE_VERSION.
//
// LanceDB opens tables by name in a directory (DIR/NAME.lance); a dataset in a
// directory named otherwise is reached through a link NAME.lance in a scratch
// directory of this process, as the Python driver does.

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";

const PROTOCOL_VERSION = 1;
const TABLE_SUFFIX = ".lance";
const WRITE_OPERATIONS = [
  "create",
  "append",
  "overwrite",
  "delete",
  "update",
  "upsert",
  "add-columns",
  "drop-columns",
  "alter-columns",
  "compact",
  "create-index",
  "tag",
  "restore",
];
const INDEX_CONFIGS = { BTREE: "btree", BITMAP: "bitmap", LABEL_LIST: "labelList" };
const CONFLICT_MARKERS = ["commit conflict", "Retryable commit conflict", "Too many concurrent writers"];

// The protocol channel is the original stdout; console output goes to stderr.
const protocolOut = process.stdout;
console.log = console.error;
console.info = console.error;
console.warn = console.error;

const home = process.env.LANCE_CONFORMANCE_NODE_HOME;
if (!home) {
  process.stderr.write("LANCE_CONFORMANCE_NODE_HOME is not set: it names the directory holding node_modules\n");
  process.exit(2);
}
const requireFromHome = createRequire(join(resolve(home), "package.json"));
const lancedb = requireFromHome("@lancedb/lancedb");
const arrow = requireFromHome("apache-arrow");
// The package's own package.json is not among its exports: read it from disk.
const lancedbVersion = JSON.parse(
  readFileSync(join(resolve(home), "node_modules", "@lancedb", "lancedb", "package.json"), "utf8"),
).version;

// A typed error answer: kind is one of the protocol's error kinds
// (bad-request, unsupported, refused, conflict, panic, internal).
class Failure extends Error {
  constructor(kind, message, type) {
    super(message);
    this.kind = kind;
    this.type = type;
  }
}

// -- opening datasets ---------------------------------------------------------

const scratch = mkdtempSync(join(tmpdir(), "lance-conformance-lancedb-node-"));
process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));

function tableLocation(uri) {
  if (uri.includes("://")) {
    const trimmed = uri.replace(/\/+$/, "");
    const base = trimmed.slice(trimmed.lastIndexOf("/") + 1);
    if (!base.endsWith(TABLE_SUFFIX) || base.length === TABLE_SUFFIX.length) {
      throw new Failure("unsupported", `LanceDB opens a remote dataset only as DIR/NAME${TABLE_SUFFIX}, not ${uri}`);
    }
    return [trimmed.slice(0, trimmed.lastIndexOf("/")), base.slice(0, -TABLE_SUFFIX.length)];
  }
  const path = resolve(uri);
  const base = basename(path);
  if (base.endsWith(TABLE_SUFFIX) && base.length > TABLE_SUFFIX.length) {
    return [dirname(path), base.slice(0, -TABLE_SUFFIX.length)];
  }
  const name = "t" + createHash("sha256").update(path, "utf8").digest("hex").slice(0, 24);
  const link = join(scratch, name + TABLE_SUFFIX);
  if (!existsSync(link)) {
    symlinkSync(path, link, "dir");
  }
  return [scratch, name];
}

async function openTable(uri, version, storageOptions = {}) {
  const [directory, name] = tableLocation(uri);
  const db = await lancedb.connect(directory, { storageOptions });
  return db.openTable(name, undefined, version === null || version === undefined ? {} : { version });
}

// -- requests -------------------------------------------------------------------

function hello(request) {
  if (!request.protocol_versions.includes(PROTOCOL_VERSION)) {
    throw new Failure("unsupported", `this worker speaks protocol version ${PROTOCOL_VERSION} only`);
  }
  return { protocol_version: PROTOCOL_VERSION, driver: driverInfo() };
}

function driverInfo() {
  return {
    name: "lancedb-node",
    implementation: "lancedb-node",
    version: lancedbVersion,
    lance_version: process.env.LANCE_CONFORMANCE_LANCE_VERSION || null,
    capabilities: ["list-versions", "read-latest", "time-travel", "row-ids", "write"],
    write_operations: WRITE_OPERATIONS,
    data_storage_versions: ["2.0", "2.1", "2.2"],
    unreported: [],
    protocol_version: PROTOCOL_VERSION,
  };
}

async function versions(request) {
  const table = await openTable(request.uri);
  const listed = await table.listVersions();
  return { versions: listed.map((entry) => Number(entry.version)).sort((a, b) => a - b) };
}

async function read(request) {
  const table = await openTable(request.uri, request.version);
  let query = table.query().useLsm(false);
  if (request.with_row_ids) {
    query = query.withRowId();
  }
  let rows = await query.toArrow();
  if (rows.batches.length === 0) {
    // A scan that yields no batch comes back as a table without columns: the
    // rows (none) are LanceDB's, their schema is the one it gives the table.
    let schema = await table.schema();
    if (request.with_row_ids) {
      schema = new arrow.Schema([...schema.fields, new arrow.Field("_rowid", new arrow.Uint64(), true)]);
    }
    rows = new arrow.Table(schema);
  }
  // The expected schema (request.schema) is a hint this worker does not use:
  // LanceDB's own Arrow view is what is compared, by meaning.
  writeFileSync(request.output, arrow.tableToIPC(rows, "file"));
  return { num_rows: rows.numRows };
}

function describe(request) {
  throw new Failure("unsupported", `LanceDB for Node.js cannot describe ${request.uri}: it exposes no manifest facts`);
}

// SQL text of the vocabulary's identifiers and literals (conformance/drivers/writes.py).
function sqlIdentifier(column) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(column) ? column : "`" + column.replaceAll("`", "``") + "`";
}

function sqlLiteral(value) {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  if (typeof value === "number") return String(value);
  return "'" + String(value).replaceAll("'", "''") + "'";
}

function predicateSql(predicate) {
  if (predicate.op === "in") {
    return `${sqlIdentifier(predicate.column)} IN (${predicate.values.map(sqlLiteral).join(", ")})`;
  }
  return `${sqlIdentifier(predicate.column)} ${predicate.op} ${sqlLiteral(predicate.value)}`;
}

function newColumnSql(column) {
  const source = sqlIdentifier(column.source);
  return column.offset ? `${source} + ${sqlLiteral(column.offset)}` : source;
}

function readRows(path) {
  return arrow.tableFromIPC(readFileSync(path));
}

async function create(uri, op, connectionOptions) {
  if (!uri.includes("://")) {
    mkdirSync(uri, { recursive: true });
  }
  const [directory, name] = tableLocation(uri);
  // The options LanceDB reads when it creates a table.
  const storageOptions = { ...connectionOptions };
  if (op.stable_row_ids) storageOptions.new_table_enable_stable_row_ids = "true";
  if (op.data_storage_version) storageOptions.new_table_data_storage_version = op.data_storage_version;
  const db = await lancedb.connect(directory, { storageOptions });
  const table = await db.createTable(name, readRows(op.rows), { mode: "create" });
  return table.version();
}

async function write(request) {
  const op = request.operation;
  const storageOptions = request.storage_options || {};
  try {
    if (op.kind === "create") {
      return { version: await create(request.uri, op, storageOptions) };
    }
    const table = await openTable(request.uri, null, storageOptions);
    const latest = await table.version();
    if (op.read_version !== null && op.read_version !== undefined && op.read_version !== latest) {
      throw new Failure(
        "unsupported",
        `LanceDB writes on the latest version (${latest}) only, not on version ${op.read_version}`,
      );
    }
    return { version: await perform(table, op) };
  } catch (error) {
    if (!(error instanceof Failure) && CONFLICT_MARKERS.some((marker) => String(error.message).includes(marker))) {
      throw new Failure("conflict", error.message, error.name);
    }
    throw error;
  }
}

async function perform(table, op) {
  switch (op.kind) {
    case "append":
    case "overwrite":
      await table.add(readRows(op.rows), { mode: op.kind });
      break;
    case "delete":
      await table.delete(predicateSql(op.where));
      break;
    case "update": {
      const valuesSql = Object.fromEntries(op.values.map(([column, value]) => [column, sqlLiteral(value)]));
      await table.update(op.where ? { valuesSql, where: predicateSql(op.where) } : { valuesSql });
      break;
    }
    case "upsert":
      await table.mergeInsert(op.on).whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(readRows(op.rows));
      break;
    case "add-columns":
      await table.addColumns(op.columns.map((column) => ({ name: column.name, valueSql: newColumnSql(column) })));
      break;
    case "drop-columns":
      await table.dropColumns(op.columns);
      break;
    case "alter-columns":
      await table.alterColumns(
        op.alterations.map((alteration) => {
          const change = { path: alteration.path };
          if (alteration.rename !== undefined) change.rename = alteration.rename;
          if (alteration.nullable !== undefined) change.nullable = alteration.nullable;
          if (alteration.data_type !== undefined) change.dataType = alteration.data_type;
          return change;
        }),
      );
      break;
    case "compact":
      await table.optimize();
      break;
    case "create-index": {
      const config = INDEX_CONFIGS[String(op.index_type).toUpperCase()];
      if (!config) {
        throw new Failure("unsupported", `LanceDB has no scalar index ${op.index_type}`);
      }
      const options = { config: lancedb.Index[config]() };
      if (op.name) options.name = op.name;
      await table.createIndex(op.column, options);
      break;
    }
    case "tag": {
      const version = op.version === null || op.version === undefined ? await table.version() : op.version;
      await (await table.tags()).create(op.name, version);
      return version;
    }
    case "restore":
      await table.checkout(op.version);
      await table.restore();
      break;
    default:
      throw new Failure("unsupported", `the LanceDB for Node.js driver does not perform ${op.kind}`);
  }
  return table.version();
}

// Each request kind: its handler and the fields it must carry.
const REQUESTS = {
  hello: [hello, ["protocol_versions"]],
  versions: [versions, ["uri"]],
  describe: [describe, ["uri", "version"]],
  read: [read, ["uri", "version", "output"]],
  write: [write, ["uri", "operation"]],
  shutdown: [() => ({}), []],
};

// -- the loop -------------------------------------------------------------------

function send(message) {
  protocolOut.write(JSON.stringify(message) + "\n");
}

function badRequest(id, message) {
  send({ id, error: { kind: "bad-request", message } });
}

async function answer(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    badRequest(null, `not JSON: ${error.message}`);
    return;
  }
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    badRequest(null, "a request is a JSON object");
    return;
  }
  const id = Number.isInteger(request.id) ? request.id : null;
  const known = Object.hasOwn(REQUESTS, request.request) ? REQUESTS[request.request] : undefined;
  if (!known) {
    badRequest(id, `unknown request ${JSON.stringify(request.request)}`);
    return;
  }
  const [handler, required] = known;
  const missing = required.filter((field) => !(field in request));
  if (missing.length) {
    badRequest(id, `${request.request} needs ${missing.join(", ")}`);
    return;
  }
  try {
    send({ id, result: await handler(request) });
  } catch (error) {
    if (error instanceof Failure) {
      send({ id, error: error.type ? { kind: error.kind, message: error.message, type: error.type } : { kind: error.kind, message: error.message } });
    } else {
      // LanceDB's own failure: it refuses the dataset or the operation.
      send({ id, error: { kind: "refused", message: String(error?.message ?? error), type: String(error?.name ?? "Error") } });
    }
  }
  if (request.request === "shutdown") {
    process.exit(0);
  }
}

// One request at a time, in order: the suite waits for each answer.
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim()) {
    await answer(line);
  }
}
