import Warehouse

/// What this build is, for `health_warehouse_build_info` and `--version`-like output.
enum BuildInfo {
    /// The release this source tree is.
    static let version = "0.9.0"

    /// The newest versioned migration compiled in (`0061`): the schema this build brings.
    static let schema = Migration.embeddedSchema
}
