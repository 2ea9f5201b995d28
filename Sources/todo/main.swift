import Foundation
import SyncCLI

// tpm2-tss logs every failed TPM command to standard error; the tool reports errors itself.
// Set while the process has one thread, unless the user asked for the library's log.
setenv("TSS2_LOG", "all+NONE", 0)

// No `await` here: the process has one thread when CommandRunner moves the secrets out of the environment.
CommandRunner.main(Todo.self, toolName: "todo", arguments: DeviceOptions.commandFirst(Array(CommandLine.arguments.dropFirst())))
