import Harness

/// `--durability default|fast`, which every section takes (docs/benchmarks.md).
enum DurabilityOption {
    /// The modes a benchmark offers: PostgreSQL's defaults (what a user runs) or the tests' fsync off.
    static let choices: [ClusterDurability] = [.default, .fast]

    /// Takes `--durability MODE` out of `arguments` (the section parses the rest); `.default`
    /// when absent.
    static func take(from arguments: inout [String]) throws -> ClusterDurability {
        guard let i = arguments.firstIndex(of: "--durability") else { return .default }
        guard i + 1 < arguments.count, let mode = ClusterDurability(rawValue: arguments[i + 1]), choices.contains(mode) else {
            throw BenchmarkError.usage("--durability takes default or fast")
        }
        arguments.removeSubrange(i...(i + 1))
        return mode
    }
}

extension ClusterDurability {
    /// The mode and what it sets, for a section's header.
    var benchmarkLabel: String {
        switch self {
        case .default: return "durability default (PostgreSQL's own: fsync, synchronous_commit and full_page_writes on)"
        case .fast: return "durability fast (fsync, synchronous_commit and full_page_writes off, as the tests run)"
        case .processCrashSafe: return "durability processCrashSafe (fsync and full_page_writes off, synchronous_commit on)"
        }
    }
}
