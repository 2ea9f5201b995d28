import SyncCLI

await CommandRunner.main(Todo.self, toolName: "todo", arguments: DeviceOptions.commandFirst(Array(CommandLine.arguments.dropFirst())))
