// The one hole LoopBound's doc comment names, pinned: Swift 6.3's region
// analysis does not see that a part of the value written into a variable
// the `withValue` closure captured belongs to the value, so this compiles.
// The day it stops compiling, the checker has closed the hole: remove the
// hole from LoopBound's doc comment (and from BridgingWorkerThreads.md)
// and move this program to MustNotCompile.
import MainLoop

final class Child { var x = 0 }
final class Core { var child = Child() }

func hole(_ bound: LoopBound<Core>) -> Child? {
    var out: Child?
    bound.withValue { out = $0.child }
    return out
}
