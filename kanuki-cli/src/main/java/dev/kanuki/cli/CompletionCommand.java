package dev.kanuki.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code kanuki completion bash|zsh}: prints a shell completion script for every command and
 * option. The script is picocli's; zsh runs it through its bash compatibility layer
 * ({@code bashcompinit}), which the script loads itself.
 */
@Command(name = "completion",
        mixinStandardHelpOptions = true,
        description = {
            "Print a completion script for SHELL (bash or zsh): commands, options and their values complete "
                    + "with TAB.",
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  source <(kanuki completion bash)                            # this shell only",
            "  kanuki completion bash > ~/.local/share/bash-completion/completions/kanuki",
            "  kanuki completion zsh > ~/.zfunc/_kanuki.sh; echo 'source ~/.zfunc/_kanuki.sh' >> ~/.zshrc",
        })
final class CompletionCommand implements Callable<Integer> {
    /** The shells the script works in. */
    enum Shell { bash, zsh }

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "SHELL", description = "bash or zsh.")
    Shell shell;

    @Override
    public Integer call() {
        CommandLine root = spec.root().commandLine();
        String script = AutoComplete.bash("kanuki", root);
        PrintWriter out = spec.commandLine().getOut();
        out.print(script);
        out.flush();
        return ExitCodes.OK;
    }
}
