// ThreadSwitches.swift: how many times the process's threads went to sleep
// (voluntary context switches, summed over /proc/self/task/*/status). Per
// MainActor round trip, it says how many thread wake-ups a route costs,
// which is what its round-trip time mostly is on this machine.
import Glibc

/// The voluntary context switches of every thread of this process so far
/// (threads that have exited no longer count, so measure with the same
/// threads alive before and after).
func voluntarySwitches() -> Int {
    guard let tasks = opendir("/proc/self/task") else { return 0 }
    defer { closedir(tasks) }
    var total = 0
    while let entry = readdir(tasks) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) {
            String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
        }
        guard name.first?.isNumber == true, let file = fopen("/proc/self/task/\(name)/status", "r") else { continue }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix("voluntary_ctxt_switches:") else { continue }
            total += Int(text.dropFirst("voluntary_ctxt_switches:".count).filter(\.isNumber)) ?? 0
        }
    }
    return total
}
