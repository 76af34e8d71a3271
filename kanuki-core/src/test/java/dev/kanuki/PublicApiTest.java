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
import org.junit.jupiter.api.Test;

/**
 * Pins the public API: the public types of the exported packages ({@code dev.kanuki},
 * {@code dev.kanuki.spi}) and their public and protected members must match
 * {@code src/test/resources/api/kanuki-core.api}. A change to the API is then a change to that
 * file too, visible in review. After a deliberate change, rewrite the file with
 * {@code mvn -pl kanuki-core verify -Dtest=PublicApiTest -Dkanuki.api.update=true} and commit it.
 */
class PublicApiTest {
    private static final List<String> EXPORTED = List.of("dev.kanuki", "dev.kanuki.spi");
    private static final Path API_FILE = Path.of("src", "test", "resources", "api", "kanuki-core.api");

    @Test
    void publicApiMatchesTheCommittedList() throws Exception {
        List<String> actual = describeApi();
        if (Boolean.getBoolean("kanuki.api.update")) {
            Files.createDirectories(API_FILE.getParent());
            Files.write(API_FILE, actual, StandardCharsets.UTF_8);
            return;
        }
        List<String> expected = Files.exists(API_FILE) ? Files.readAllLines(API_FILE, StandardCharsets.UTF_8) : List.of();
        if (!expected.equals(actual)) {
            Set<String> was = new HashSet<>(expected);
            Set<String> is = new HashSet<>(actual);
            String removed = expected.stream().filter(line -> !is.contains(line)).map(line -> "- " + line)
                    .collect(Collectors.joining("\n"));
            String added = actual.stream().filter(line -> !was.contains(line)).map(line -> "+ " + line)
                    .collect(Collectors.joining("\n"));
            fail("the public API of kanuki-core differs from " + API_FILE + ":\n" + removed + (removed.isEmpty() ? "" : "\n")
                    + added + "\nIf the change is deliberate, rewrite the file with\n"
                    + "  mvn -pl kanuki-core verify -Dtest=PublicApiTest -Dkanuki.api.update=true\nand commit it.");
        }
    }

    /** One line per public type, then one indented line per public or protected member, sorted. */
    static List<String> describeApi() throws IOException, URISyntaxException, ClassNotFoundException {
        Path classes = Path.of(LockProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Set<String> typeNames = new TreeSet<>();
        for (String pkg : EXPORTED) {
            Path dir = classes.resolve(pkg.replace('.', '/'));
            try (Stream<Path> files = Files.list(dir)) {
                files.map(p -> p.getFileName().toString())
                        .filter(n -> n.endsWith(".class") && !n.equals("package-info.class"))
                        .forEach(n -> typeNames.add(pkg + "." + n.substring(0, n.length() - ".class".length())));
            }
        }
        List<String> lines = new ArrayList<>();
        for (String name : typeNames) {
            Class<?> type = Class.forName(name, false, PublicApiTest.class.getClassLoader());
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
