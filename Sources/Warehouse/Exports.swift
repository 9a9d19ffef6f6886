// Every importer of Warehouse also sees `SHA256` (tokens, bodies and migrations are hashed
// with it), as it did when the wrapper lived here; it now lives in the dependency-free
// `Hashing` module so that Backlog and DemoData share it without pulling in the database.
@_exported import Hashing
