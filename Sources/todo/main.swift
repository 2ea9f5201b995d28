import SyncCLI

// No `await` here: the process has one thread when CommandRunner moves the secrets out of the environment.
CommandRunner.main(Todo.self, toolName: "todo", arguments: DeviceOptions.commandFirst(Array(CommandLine.arguments.dropFirst())))
