@main struct Main { static func main() { print("todo") } }
