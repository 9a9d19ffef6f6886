import Warehouse

/// What this build is, for `health_warehouse_build_info` and `--version`-like output.
enum BuildInfo {
    /// The release this source tree is.
    static let version = "0.9.0"

    /// The newest versioned migration compiled in (`0061`): the schema this build brings.
    static let schema: String = {
        let newest = Migration.embedded.compactMap(\.version).max() ?? 0
        let digits = String(newest)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }()
}
