package dev.kanuki.contract;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A second process that holds many locks at once ({@code PREFIX0} … {@code PREFIX<count-1>}),
 * for tests of many waiters: started with {@link #start}, it releases them all on
 * {@link #releaseAll()} and exits when closed.
 */
public final class ManyLocksHolder implements AutoCloseable {
    private final Process process;
    private final BufferedReader out;
    private final Writer in;

    private ManyLocksHolder(Process process) {
        this.process = process;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    /**
     * Starts the holder and waits until it holds every lock.
     *
     * @param uri backend URI
     * @param prefix the names' common prefix
     * @param count how many names
     * @param errorLog where the child's stderr goes
     * @return the running holder
     * @throws IOException when it does not report holding them
     */
    public static ManyLocksHolder start(String uri, String prefix, int count, Path errorLog) throws IOException {
        return start(uri, prefix, count, ProcessBuilder.Redirect.to(errorLog.toFile()), "stderr in " + errorLog);
    }

    /**
     * Starts the holder with its stderr on this process's own stderr (inherited, so nothing of
     * this process's earlier output is truncated, as reopening {@code /dev/stderr} by path would
     * when stderr is a file), and waits until it holds every lock.
     *
     * @param uri backend URI
     * @param prefix the names' common prefix
     * @param count how many names
     * @return the running holder
     * @throws IOException when it does not report holding them
     */
    public static ManyLocksHolder startInheritingStderr(String uri, String prefix, int count) throws IOException {
        return start(uri, prefix, count, ProcessBuilder.Redirect.INHERIT, "its stderr is this process's");
    }

    private static ManyLocksHolder start(String uri, String prefix, int count, ProcessBuilder.Redirect errors,
            String whereErrorsAre) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), uri, prefix, Integer.toString(count));
        builder.redirectError(errors);
        ManyLocksHolder holder = new ManyLocksHolder(builder.start());
        String line = holder.out.readLine();
        if (line == null || !line.equals("HELD")) {
            holder.process.destroyForcibly();
            throw new IOException("holder of " + count + " locks failed (" + line + "); " + whereErrorsAre);
        }
        return holder;
    }

    /**
     * Releases every lock and waits until the holder says so.
     *
     * @throws IOException when it does not confirm
     */
    public void releaseAll() throws IOException {
        in.write("release\n");
        in.flush();
        String line = out.readLine();
        if (!"RELEASED".equals(line)) {
            throw new IOException("holder did not confirm the release: " + line);
        }
    }

    @Override
    public void close() throws Exception {
        try {
            in.close();
        } catch (IOException ignored) {
            // it may have died already
        }
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
    }

    /** The holder process. Arguments: {@code URI PREFIX COUNT}. */
    public static final class Main {
        private Main() {
        }

        /**
         * Runs the holder process.
         *
         * @param args URI, prefix, count
         * @throws Exception on any failure (the exit code is then non-zero)
         */
        public static void main(String[] args) throws Exception {
            int count = Integer.parseInt(args[2]);
            BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            try (LockProvider provider = LockProvider.open(args[0])) {
                List<LockHandle> held = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    held.add(provider.lock(args[1] + i).acquire(Duration.ofSeconds(60)));
                }
                System.out.println("HELD");
                System.out.flush();
                if ("release".equals(commands.readLine())) {
                    held.forEach(LockHandle::close);
                    System.out.println("RELEASED");
                    System.out.flush();
                }
                while (commands.readLine() != null) {
                    // stay until the parent closes our stdin
                }
            }
        }
    }
}
