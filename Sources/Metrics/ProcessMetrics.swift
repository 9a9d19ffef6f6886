#if canImport(Glibc)
import Glibc
#endif

/// The standard `process_*` families of Prometheus' client libraries, read from `/proc/self`
/// at each scrape (Linux): CPU seconds, resident and virtual memory, open and maximum file
/// descriptors, start time.
public enum ProcessMetrics {
    /// Registers the process families in `registry`.
    public static func register(in registry: MetricsRegistry) {
        registry.register(GaugeFamily("process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.",
                                      type: .counter) { stat()?.cpuSeconds ?? 0 })
        registry.register(GaugeFamily("process_resident_memory_bytes", help: "Resident memory size in bytes.") {
            stat()?.residentBytes ?? 0
        })
        registry.register(GaugeFamily("process_virtual_memory_bytes", help: "Virtual memory size in bytes.") {
            stat()?.virtualBytes ?? 0
        })
        registry.register(GaugeFamily("process_open_fds", help: "Number of open file descriptors.") { Double(openDescriptors()) })
        registry.register(GaugeFamily("process_max_fds", help: "Maximum number of open file descriptors.") {
            var limit = rlimit()
            return getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Double(limit.rlim_cur) : 0
        })
        let started = startTime
        registry.register(GaugeFamily("process_start_time_seconds",
                                      help: "Start time of the process since unix epoch in seconds.") { started })
    }

    /// What `/proc/self/stat` tells.
    struct Stat {
        var cpuSeconds: Double
        var residentBytes: Double
        var virtualBytes: Double
        /// Clock ticks after boot when the process started.
        var startTicks: Double
    }

    /// `/proc/self/stat`'s fields (proc(5)): after the command name in parentheses, utime and
    /// stime are fields 14 and 15, starttime 22, vsize 23, rss (pages) 24.
    static func stat() -> Stat? {
        guard let text = read("/proc/self/stat"), let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state).
        func field(_ number: Int) -> Double { Double(fields[number - 3]) ?? 0 }
        guard fields.count >= 22 else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return Stat(cpuSeconds: (field(14) + field(15)) / ticks, residentBytes: field(24) * Double(sysconf(Int32(_SC_PAGESIZE))),
                    virtualBytes: field(23), startTicks: field(22))
    }

    /// The process' start, seconds since the epoch: boot time (`btime` of `/proc/stat`) plus
    /// its start in clock ticks after boot.
    static let startTime: Double = {
        let boot = read("/proc/stat")?.split(separator: "\n").first { $0.hasPrefix("btime ") }
            .flatMap { Double($0.dropFirst(6)) } ?? 0
        return boot + (stat()?.startTicks ?? 0) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }()

    /// Entries of `/proc/self/fd`, less the one the listing itself holds open.
    static func openDescriptors() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] }
            if first != UInt8(ascii: ".") { count += 1 }
        }
        return max(0, count - 1)
    }

    /// A small file of `/proc` read whole (their size reads as 0, so read until the end).
    static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += buffer.prefix(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
