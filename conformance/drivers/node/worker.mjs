// The lancedb-node worker: LanceDB for Node.js (@lancedb/lancedb) answering
// the suite's worker protocol, one JSON document a line on stdin, one answer a
// line on stdout. Anything else the process prints goes to stderr, so the
// protocol channel carries answers only.
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

class Failure extends Error {
  constructor(type, message) {
    super(message);
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
      throw new Failure("InvalidRequest", `LanceDB opens a remote dataset only as DIR/NAME${TABLE_SUFFIX}, not ${uri}`);
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

async function openTable(uri, version) {
  const [directory, name] = tableLocation(uri);
  const db = await lancedb.connect(directory);
  return db.openTable(name, undefined, version === null || version === undefined ? {} : { version });
}

// -- requests -------------------------------------------------------------------

function info() {
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
  return listed.map((entry) => Number(entry.version)).sort((a, b) => a - b);
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
  writeFileSync(request.arrow_path, arrow.tableToIPC(rows, "file"));
  return { num_rows: rows.numRows };
}

function describe(request) {
  throw new Failure("NotSupported", `LanceDB for Node.js cannot describe ${request.uri}: it exposes no manifest facts`);
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

async function create(uri, op) {
  if (!uri.includes("://")) {
    mkdirSync(uri, { recursive: true });
  }
  const [directory, name] = tableLocation(uri);
  // The options LanceDB reads when it creates a table.
  const storageOptions = {};
  if (op.stable_row_ids) storageOptions.new_table_enable_stable_row_ids = "true";
  if (op.data_storage_version) storageOptions.new_table_data_storage_version = op.data_storage_version;
  const db = await lancedb.connect(directory, { storageOptions });
  const table = await db.createTable(name, readRows(op.rows), { mode: "create" });
  return table.version();
}

async function write(request) {
  const op = request.op;
  try {
    if (op.kind === "create") {
      return { version: await create(request.uri, op) };
    }
    const table = await openTable(request.uri);
    const latest = await table.version();
    if (op.read_version !== null && op.read_version !== undefined && op.read_version !== latest) {
      throw new Failure(
        "WriteNotSupported",
        `LanceDB writes on the latest version (${latest}) only, not on version ${op.read_version}`,
      );
    }
    return { version: await perform(table, op) };
  } catch (error) {
    if (!(error instanceof Failure) && CONFLICT_MARKERS.some((marker) => String(error.message).includes(marker))) {
      throw new Failure("WriteConflict", error.message);
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
        throw new Failure("WriteNotSupported", `LanceDB has no scalar index ${op.index_type}`);
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
      throw new Failure("WriteNotSupported", `the LanceDB for Node.js driver does not perform ${op.kind}`);
  }
  return table.version();
}

const HANDLERS = {
  hello: info,
  capabilities: info,
  versions,
  read,
  describe,
  write,
};

// -- the loop -------------------------------------------------------------------

function send(message) {
  protocolOut.write(JSON.stringify(message) + "\n");
}

async function answer(line) {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    send({ id: null, error: { type: "InvalidRequest", message: `not JSON: ${error.message}` } });
    return;
  }
  const id = request && typeof request === "object" ? (request.id ?? null) : null;
  const handler = request && typeof request === "object" ? HANDLERS[request.request] : undefined;
  if (request && request.request === "shutdown") {
    send({ id, result: null });
    process.exit(0);
  }
  if (!handler) {
    send({ id, error: { type: "InvalidRequest", message: `unknown request ${JSON.stringify(request?.request)}` } });
    return;
  }
  try {
    send({ id, result: await handler(request) });
  } catch (error) {
    const type = error instanceof Failure ? error.type : "ImplementationError";
    send({ id, error: { type, message: String(error?.message ?? error) } });
  }
}

// One request at a time, in order: the suite waits for each answer.
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim()) {
    await answer(line);
  }
}
