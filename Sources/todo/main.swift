import SyncCLI

await CommandRunner.main(Todo.self, toolName: "todo")
