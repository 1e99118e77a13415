// Exports.swift: `import MainLoop` is all a user needs, invocations included.
@_exported import Invocations
