import SyncCLI

// No `await` here: the process has one thread when CommandRunner moves the secrets out of the environment.
CommandRunner.main(SyncKeysTool.self, toolName: "sync-keys")
