// mainactor-wakeups.swift: the swift_task_mainactor peer's round trip
// (plain Swift on Linux: `await MainActor.run {}` from a detached task
// under dispatchMain(), as in ../shared/bench-peers/swift_task_mainactor.swift),
// split as mainloop-bench splits its own MainActor routes: the hop there
// (before the `await` to the body running), the hop back (the body to the
// task running again), p50 and p75 each, and the process's voluntary
// context switches per round trip. Built and run by bench/mainactor-wakeups.sh.
import Dispatch
import Foundation

func voluntarySwitches() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.reduce(0) { total, task in
        let status = (try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
        return total + (line.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0)
    }
}

func nowNs() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func figure(_ metric: String, _ value: Double, _ unit: String) {
    print("FIGURE peer=swift_task_mainactor metric=\(metric) value=\(value) unit=\(unit)")
}

let rounds = 20_000, warmUp = 1_000
nonisolated(unsafe) let mark = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
Task.detached {
    for _ in 0..<warmUp { await MainActor.run { mark.pointee = nowNs() } }
    var there: [UInt64] = [], back: [UInt64] = []
    let before = voluntarySwitches()
    for _ in 0..<rounds {
        let start = nowNs()
        await MainActor.run { mark.pointee = nowNs() }
        let end = nowNs()
        there.append(mark.pointee - start)
        back.append(end - mark.pointee)
    }
    let switches = voluntarySwitches() - before
    for (name, samples) in [("there", there.sorted()), ("back", back.sorted())] {
        figure("roundtrip_\(name)_p50", Double(samples[rounds / 2]) / 1000, "us")
        figure("roundtrip_\(name)_p75", Double(samples[rounds * 3 / 4]) / 1000, "us")
    }
    figure("wakeups_per_roundtrip", Double(switches) / Double(rounds), "switches")
    exit(0)
}
dispatchMain()
