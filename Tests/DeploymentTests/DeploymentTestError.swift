/// A failed precondition of a test, with what was found.
struct DeploymentTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
