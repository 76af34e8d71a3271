package dev.kanuki.cli;

import dev.kanuki.LockNames;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.LockUri;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code kanuki status}: who holds each named lock, or every lock the backend can list, without
 * taking any. Names and hosts are escaped before they reach the terminal: they come from files
 * anyone with access to the lock directory may have written.
 */
@Command(name = "status",
        mixinStandardHelpOptions = true,
        description = {
            "Show who holds each lock NAME, without taking it; with no NAME, every lock the backend can "
                    + "list (held, stale, and for the os strategy also free ones).",
            "Columns: NAME, STATE (held, shared, stale, free, unknown), STRATEGY, OWNER (pid@host), "
                    + "AGE (since it was acquired), LEASE LEFT (\"session\" when the lock lasts as long as "
                    + "its holder's process; \"expired 3s ago\" when run out), TOKEN (last fencing token). "
                    + "A stale lock's holder is gone or its lease ran out: the next acquirer, or kanuki break, "
                    + "removes it; under the URI option keepStale=true it is left alone and shown as STALE (KEPT) "
                    + "until kanuki break removes it.",
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  kanuki status -b 'file:/var/lock/app?strategy=mkdir'",
            "  kanuki status -b file:/var/lock/app --json nightly deploy",
            "Without NAME, a backend that cannot list its locks (mem:) exits with 2; name the locks instead.",
        })
final class StatusCommand implements Callable<Integer> {
    private static final String NONE = "-";
    private static final List<String> HEADERS = List.of("NAME", "STATE", "STRATEGY", "OWNER", "AGE", "LEASE LEFT",
            "TOKEN");

    @Spec
    CommandSpec spec;

    @Option(names = {"-b", "--backend"}, paramLabel = "URI",
            description = "The lock backend (default: ${DEFAULT-VALUE}).")
    String backend = LockProvider.DEFAULT_URI;

    @Option(names = "--json", description = "Print a JSON array, one object per lock: the columns' text "
            + "plus raw values (epoch milliseconds, milliseconds, numbers; null when absent).")
    boolean json;

    @Parameters(paramLabel = "NAME", arity = "0..*", description = "The locks to show (default: all listed).")
    List<String> names = new ArrayList<>();

    /** One lock as shown: the column values, computed once for the table and for JSON. */
    record Row(String name, LockStatus.State state, String strategy, OwnerInfo owner, Long ageMillis,
               Long leaseLeftMillis, long token, boolean kept) {

        static Row of(LockStatus status, String strategy, Instant now) {
            return of(status, strategy, now, false);
        }

        /** @param keepStale whether the backend keeps stale locks ({@code keepStale=true}): a stale one is then kept */
        static Row of(LockStatus status, String strategy, Instant now, boolean keepStale) {
            // A free lock has no holder; the last one some backends remember is not shown.
            OwnerInfo owner = status.state() == LockStatus.State.FREE ? null : status.owner().orElse(null);
            Long age = owner == null || owner.acquiredAt() == null ? null
                    : now.toEpochMilli() - owner.acquiredAt().toEpochMilli();
            Long left = owner == null ? null : Display.leaseLeftMillis(owner, now);
            return new Row(status.name(), status.state(), strategy, owner, age, left, status.lastFencingToken(),
                    keepStale && status.state() == LockStatus.State.STALE);
        }

        List<String> cells() {
            return List.of(
                    Display.safe(name),
                    kept ? "STALE (KEPT)" : Display.state(state),
                    strategy,
                    owner == null ? NONE : Display.owner(owner),
                    ageMillis == null ? NONE : Display.duration(ageMillis),
                    owner == null ? NONE : Display.leaseLeft(leaseLeftMillis),
                    token < 0 ? NONE : Long.toString(token));
        }

        Json toJson() {
            Json json = new Json()
                    .field("name", name)
                    .field("state", Display.state(state))
                    .field("strategy", strategy)
                    .field("owner", owner == null ? null : owner.pid() + "@" + owner.host())
                    .field("host", owner == null ? null : owner.host())
                    .nullableField("pid", owner == null ? null : owner.pid())
                    .field("ownerId", owner == null ? null : owner.id())
                    .field("age", ageMillis == null ? null : Display.duration(ageMillis))
                    .nullableField("ageMillis", ageMillis)
                    .nullableField("acquiredAt", owner == null || owner.acquiredAt() == null ? null
                            : owner.acquiredAt().toEpochMilli())
                    .field("leaseLeft", owner == null ? null : Display.leaseLeft(leaseLeftMillis))
                    .nullableField("leaseLeftMillis", leaseLeftMillis)
                    .nullableField("leaseUntil", owner == null || owner.leaseUntil() == null ? null
                            : owner.leaseUntil().toEpochMilli())
                    .nullableField("token", token < 0 ? null : token);
            // Only for a kept stale lock: every other object keeps the fields scripts already read.
            return kept ? json.field("kept", true) : json;
        }
    }

    @Override
    public Integer call() {
        names.replaceAll(LockNames::validate);
        List<LockStatus> statuses = new ArrayList<>();
        String strategy;
        Optional<Path> missing = LocalDirectory.missing(backend);
        if (missing.isPresent()) {
            // Opening the backend would create the directory: a look at a mistyped path leaves none.
            KanukiCli.printError(spec.commandLine(), "no such directory " + Display.safe(missing.get().toString())
                    + ": no lock is held there");
            strategy = Display.strategy(backend);
            for (String name : names) {
                statuses.add(new LockStatus(name, LockStatus.State.FREE, Optional.empty(), -1));
            }
        } else {
            SqliteNative.prepareFor(backend);
            try (LockProvider provider = LockProvider.open(backend)) {
                strategy = Display.strategy(provider.uri());
                if (names.isEmpty()) {
                    try {
                        statuses.addAll(provider.list());
                    } catch (UnsupportedOperationException e) {
                        KanukiCli.printError(spec.commandLine(), provider.uri() + " cannot list its locks; name them: "
                                + "kanuki status -b " + provider.uri() + " NAME...");
                        return ExitCodes.USAGE;
                    }
                    statuses.sort(Comparator.comparing(LockStatus::name));
                } else {
                    for (String name : names) {
                        statuses.add(provider.status(name));
                    }
                }
            }
        }
        Instant now = Instant.now();
        List<Row> rows = new ArrayList<>();
        for (LockStatus status : statuses) {
            rows.add(Row.of(status, strategy, now, keepsStale(backend)));
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(Json.array(rows.stream().map(Row::toJson).toList()));
        } else if (rows.isEmpty()) {
            out.println("no locks");
        } else {
            printTable(out, rows);
        }
        out.flush();
        return ExitCodes.OK;
    }

    /** @return whether the URI asks for stale locks to be kept ({@code keepStale=true}) */
    private static boolean keepsStale(String uri) {
        try {
            return LockUri.parse(uri).param("keepStale").map("true"::equals).orElse(false);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static void printTable(PrintWriter out, List<Row> rows) {
        List<List<String>> lines = new ArrayList<>();
        lines.add(HEADERS);
        rows.forEach(row -> lines.add(row.cells()));
        int[] widths = new int[HEADERS.size()];
        for (List<String> line : lines) {
            for (int i = 0; i < widths.length; i++) {
                widths[i] = Math.max(widths[i], line.get(i).codePointCount(0, line.get(i).length()));
            }
        }
        // One string, printed at once: a println per line flushes per line (10,000 writes for 10,000 locks).
        StringBuilder table = new StringBuilder(lines.size() * 100);
        String newline = System.lineSeparator();
        for (List<String> line : lines) {
            int start = table.length();
            for (int i = 0; i < widths.length; i++) {
                String cell = line.get(i);
                table.append(cell);
                if (i < widths.length - 1) {
                    table.append(" ".repeat(widths[i] - cell.codePointCount(0, cell.length()) + 2));
                }
            }
            int end = table.length();
            while (end > start && table.charAt(end - 1) == ' ') {
                end--;
            }
            table.setLength(end);
            table.append(newline);
        }
        out.print(table);
    }
}
