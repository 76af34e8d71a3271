package dev.kanuki.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code kanuki demo}: small programs that show what a lock prevents. */
@Command(name = "demo",
        mixinStandardHelpOptions = true,
        description = "Demonstrations of what a lock prevents.",
        subcommands = BoardCommand.class)
final class DemoCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    /** No demo named: show the usage on standard error. */
    @Override
    public Integer call() {
        return KanukiCli.missing(spec, "demo; one of: board");
    }
}
