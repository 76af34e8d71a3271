package dev.kanuki.cli;

import dev.kanuki.Durations;
import dev.kanuki.LockNames;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code kanuki status}: who holds each named lock, without taking it. */
@Command(name = "status",
        mixinStandardHelpOptions = true,
        description = "Show whether each lock NAME is held, by whom, and its last fencing token.")
final class StatusCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = {"-b", "--backend"}, paramLabel = "URI",
            description = "The lock backend (default: ${DEFAULT-VALUE}).")
    String backend = LockProvider.DEFAULT_URI;

    @Option(names = "--json", description = "Print a JSON array, one object per lock.")
    boolean json;

    @Parameters(paramLabel = "NAME", arity = "1..*", description = "The locks to show.")
    List<String> names = new ArrayList<>();

    @Override
    public Integer call() {
        names.forEach(LockNames::validate);
        List<LockStatus> statuses = new ArrayList<>();
        try (LockProvider provider = LockProvider.open(backend)) {
            for (String name : names) {
                statuses.add(provider.status(name));
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            List<Json> objects = new ArrayList<>();
            for (LockStatus status : statuses) {
                objects.add(toJson(status));
            }
            out.println(Json.array(objects));
        } else {
            for (LockStatus status : statuses) {
                print(out, status);
            }
        }
        out.flush();
        return ExitCodes.OK;
    }

    private static void print(PrintWriter out, LockStatus status) {
        out.println(LockNames.printable(status.name()) + ": " + stateText(status.state()));
        status.owner().ifPresent(owner -> {
            boolean free = status.state() == LockStatus.State.FREE;
            out.println("  " + (free ? "last owner: " : "owner: ") + owner.describe());
            if (!free) {
                out.println("  lease: " + leaseText(owner));
            }
        });
        out.println("  last fencing token: "
                + (status.lastFencingToken() < 0 ? "unknown" : Long.toString(status.lastFencingToken())));
    }

    /** By name, so that a state added to LockStatus later still prints (as its name). */
    private static String stateText(LockStatus.State state) {
        switch (state.name()) {
            case "FREE":
                return "free";
            case "HELD":
                return "held";
            case "HELD_SHARED":
                return "held (shared)";
            case "STALE":
                return "stale (its holder is gone; the next acquirer removes it)";
            case "UNKNOWN":
                return "unknown (this backend cannot tell without taking the lock)";
            default:
                return state.name().toLowerCase(Locale.ROOT);
        }
    }

    private static String leaseText(OwnerInfo owner) {
        if (owner.leaseUntil() == null) {
            return "until the holder's process or connection ends";
        }
        Duration left = Duration.between(Instant.now(), owner.leaseUntil());
        if (left.isNegative()) {
            return "expired " + Durations.format(Duration.ofMillis(left.negated().toMillis())) + " ago (stale)";
        }
        return Durations.format(Duration.ofMillis(left.toMillis())) + " left, until " + owner.leaseUntil();
    }

    private static Json toJson(LockStatus status) {
        Json owner = status.owner().map(o -> new Json()
                .field("host", o.host())
                .field("pid", o.pid())
                .field("id", o.id())
                .field("acquiredAt", o.acquiredAt().toString())
                .field("leaseUntil", o.leaseUntil() == null ? null : o.leaseUntil().toString()))
                .orElse(null);
        return new Json()
                .field("name", status.name())
                .field("state", status.state().name())
                .field("owner", owner)
                .field("lastFencingToken", status.lastFencingToken());
    }
}
