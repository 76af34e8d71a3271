package dev.kanuki;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Lists a module's public API and compares it with a committed {@code .api} file; shared with
 * other modules through kanuki-core's test jar (kanuki-servlet pins its API with it).
 */
public final class ApiListing {
    private ApiListing() {
    }

    /**
     * Fails when the API differs from the file; rewrites the file instead under {@code -Dkanuki.api.update=true}.
     *
     * @param actual the API, as {@link #describe} gives it
     * @param apiFile the committed list, relative to the module
     * @param module the module's name, for the message
     * @throws IOException when the file cannot be read or written
     */
    public static void assertMatchesFile(List<String> actual, Path apiFile, String module) throws IOException {
        if (Boolean.getBoolean("kanuki.api.update")) {
            Files.createDirectories(apiFile.getParent());
            Files.write(apiFile, actual, StandardCharsets.UTF_8);
            return;
        }
        List<String> expected = Files.exists(apiFile) ? Files.readAllLines(apiFile, StandardCharsets.UTF_8) : List.of();
        if (!expected.equals(actual)) {
            Set<String> was = new HashSet<>(expected);
            Set<String> is = new HashSet<>(actual);
            String removed = expected.stream().filter(line -> !is.contains(line)).map(line -> "- " + line)
                    .collect(Collectors.joining("\n"));
            String added = actual.stream().filter(line -> !was.contains(line)).map(line -> "+ " + line)
                    .collect(Collectors.joining("\n"));
            fail("the public API of " + module + " differs from " + apiFile + ":\n" + removed + (removed.isEmpty() ? "" : "\n")
                    + added + "\nIf the change is deliberate, rewrite the file with\n"
                    + "  mvn -pl " + module + " verify -Dtest=PublicApiTest -Dkanuki.api.update=true\nand commit it.");
        }
    }

    /**
     * One line per public type, then one indented line per public or protected member, sorted.
     *
     * @param anchor any class of the module, to find its compiled classes
     * @param packages the exported packages
     * @return the API listing
     * @throws IOException when the classes cannot be listed
     * @throws URISyntaxException when the classes' location is not a path
     * @throws ClassNotFoundException when a listed class cannot be loaded
     */
    public static List<String> describe(Class<?> anchor, List<String> packages)
            throws IOException, URISyntaxException, ClassNotFoundException {
        Path classes = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
        Set<String> typeNames = new TreeSet<>();
        for (String pkg : packages) {
            Path dir = classes.resolve(pkg.replace('.', '/'));
            try (Stream<Path> files = Files.list(dir)) {
                files.map(p -> p.getFileName().toString())
                        .filter(n -> n.endsWith(".class") && !n.equals("package-info.class"))
                        .forEach(n -> typeNames.add(pkg + "." + n.substring(0, n.length() - ".class".length())));
            }
        }
        List<String> lines = new ArrayList<>();
        for (String name : typeNames) {
            Class<?> type = Class.forName(name, false, anchor.getClassLoader());
            if (!isVisible(type)) {
                continue;
            }
            lines.add(header(type));
            Set<String> members = new TreeSet<>();
            for (Constructor<?> c : type.getDeclaredConstructors()) {
                if (isApi(c.getModifiers(), c.isSynthetic())) {
                    members.add(c.toGenericString());
                }
            }
            for (Method m : type.getDeclaredMethods()) {
                if (isApi(m.getModifiers(), m.isSynthetic() || m.isBridge())) {
                    members.add(m.toGenericString());
                }
            }
            for (Field f : type.getDeclaredFields()) {
                if (isApi(f.getModifiers(), f.isSynthetic())) {
                    members.add(f.toGenericString());
                }
            }
            members.forEach(member -> lines.add("  " + member));
        }
        return lines;
    }

    /** A type is API when it and every type enclosing it are public. */
    private static boolean isVisible(Class<?> type) {
        for (Class<?> t = type; t != null; t = t.getDeclaringClass()) {
            if (!Modifier.isPublic(t.getModifiers()) || t.isAnonymousClass() || t.isLocalClass()) {
                return false;
            }
        }
        return true;
    }

    private static boolean isApi(int modifiers, boolean synthetic) {
        return !synthetic && (Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers));
    }

    private static String header(Class<?> type) {
        StringBuilder line = new StringBuilder(type.toGenericString());
        Type superclass = type.getGenericSuperclass();
        if (superclass != null && superclass != Object.class) {
            line.append(" extends ").append(superclass.getTypeName());
        }
        Type[] interfaces = type.getGenericInterfaces();
        if (interfaces.length > 0) {
            line.append(type.isInterface() ? " extends " : " implements ");
            line.append(Stream.of(interfaces).map(Type::getTypeName).collect(Collectors.joining(", ")));
        }
        return line.toString();
    }
}
