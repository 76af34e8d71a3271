package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The quick path reads every command line it takes exactly as picocli does, and leaves the rest to picocli. */
class QuickRunTest {
    private static final List<String[]> TAKEN = List.of(
            new String[] {"run", "job", "--", "true"},
            new String[] {"run", "job", "true"},
            new String[] {"run", "-b", "file:/tmp/x", "job", "--", "sh", "-c", "exit 3"},
            new String[] {"run", "--backend=mem:", "-n", "-s", "job", "cmd", "-x", "--", "-y"},
            new String[] {"run", "--backend", "file:", "--wait", "2m", "--conflict-exit-code", "9", "job", "--", "a"},
            new String[] {"run", "-w", "500ms", "-E", "0", "--nonblock", "--shared", "--debug", "j", "--", "b"},
            new String[] {"run", "--wait=1.5s", "--conflict-exit-code=200", "caf\u00e9", "--", "x"},
            new String[] {"run", "-b", "file:", "na me", "--", "-", "@notafile"},
            new String[] {"run", "--lease", "2s", "--on-lost", "kill", "--kill-after=3s", "job", "--", "x"},
            new String[] {"run", "--on-lost=ignore", "--lease=1500ms", "job", "x"},
            new String[] {"run", "--max-time", "2m", "--kill-after", "5s", "job", "--", "x"},
            new String[] {"run", "--max-time=90s", "job", "x"},
            new String[] {"run", "-w", "forever", "job", "--", "x"},
            new String[] {"run", "--wait=forever", "-b", "file:", "job", "x"});

    private static final List<String[]> LEFT_TO_PICOCLI = List.of(
            new String[] {"run", "--help"},
            new String[] {"run", "-h", "job", "--", "true"},
            new String[] {"run", "-V"},
            new String[] {"run", "job"},
            new String[] {"run", "job", "--"},
            new String[] {"run", "-ns", "job", "--", "true"},
            new String[] {"run", "-bfile:", "job", "--", "true"},
            new String[] {"run", "-b", "file:", "-b", "mem:", "job", "--", "true"},
            new String[] {"run", "-w", "five", "job", "--", "true"},
            new String[] {"run", "-E", "0x10", "job", "--", "true"},
            new String[] {"run", "-b", "-n", "job", "--", "true"},
            new String[] {"run", "--no-such-option", "job", "--", "true"},
            new String[] {"run", "--on-lost", "explode", "job", "--", "true"},
            new String[] {"run", "--lease", "soon", "job", "--", "true"},
            new String[] {"run", "--max-time", "later", "job", "--", "true"},
            new String[] {"run", "--", "job", "true"},
            new String[] {"run", "@args", "true"},
            new String[] {"status", "job", "x"},
            new String[] {"--debug", "run", "job", "true"});

    @Test
    void readsWhatItTakesAsPicocliDoes() throws Exception {
        for (String[] args : TAKEN) {
            RunCommand quick = QuickRun.parse(args);
            assertNotNull(quick, () -> "the quick path does not take " + Arrays.toString(args));
            RunCommand byPicocli = new RunCommand();
            CommandLine root = KanukiCli.commandLine();
            CommandLine run = root.getSubcommands().get("run");
            root.parseArgs(args);
            byPicocli = run.getCommand();
            for (Field field : fieldsOf(RunCommand.class)) {
                assertEquals(field.get(byPicocli), field.get(quick),
                        () -> field.getName() + " of " + Arrays.toString(args));
            }
        }
    }

    @Test
    void leavesEverythingElseToPicocli() {
        for (String[] args : LEFT_TO_PICOCLI) {
            assertNull(QuickRun.parse(args), () -> "the quick path took " + Arrays.toString(args));
        }
    }

    /** A new option of run must be known to the quick path, or run would start slowly with it. */
    @Test
    void knowsEveryOptionOfRun() {
        Set<String> known = Set.of("-b", "--backend", "-w", "--wait", "-n", "--nonblock", "-s", "--shared", "-E",
                "--conflict-exit-code", "--debug", "-h", "--help", "-V", "--version", "--lease", "--kill-after", "--on-lost",
                "--max-time");
        CommandLine run = KanukiCli.commandLine().getSubcommands().get("run");
        for (CommandLine.Model.OptionSpec option : run.getCommandSpec().options()) {
            for (String name : option.names()) {
                assertTrue(known.contains(name), "QuickRun does not know " + name + " of run: teach it, and add the "
                        + "option's forms to this test's TAKEN list");
            }
        }
    }

    private static List<Field> fieldsOf(Class<?> type) {
        List<Field> fields = new ArrayList<>();
        for (Field field : type.getDeclaredFields()) {
            if (field.isAnnotationPresent(CommandLine.Option.class) || field.isAnnotationPresent(CommandLine.Parameters.class)) {
                field.setAccessible(true);
                fields.add(field);
            }
        }
        return fields;
    }
}
