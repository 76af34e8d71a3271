package dev.kanuki.smoke;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every library jar is a Java module with the name users write in {@code requires}, read the way
 * a user's tools read it ({@code jar --describe-module}); backends provide their factory as a
 * service, and only API packages are exported.
 */
class LibraryModulesTest {
    private static final String FACTORY = "dev.kanuki.spi.LockBackendFactory";

    /** Artifact → module name. */
    private static final Map<String, String> MODULE_NAMES = new TreeMap<>(Map.ofEntries(
            Map.entry("kanuki-core", "dev.kanuki.core"),
            Map.entry("kanuki-file", "dev.kanuki.file"),
            Map.entry("kanuki-sqlite", "dev.kanuki.sqlite"),
            Map.entry("kanuki-jdbc", "dev.kanuki.jdbc"),
            Map.entry("kanuki-redis", "dev.kanuki.redis"),
            Map.entry("kanuki-memcached", "dev.kanuki.memcached"),
            Map.entry("kanuki-etcd", "dev.kanuki.etcd"),
            Map.entry("kanuki-zookeeper", "dev.kanuki.zookeeper"),
            Map.entry("kanuki-servlet", "dev.kanuki.servlet"),
            Map.entry("kanuki-micrometer", "dev.kanuki.micrometer"),
            Map.entry("kanuki-torture", "dev.kanuki.torture"),
            Map.entry("kanuki-testkit", "dev.kanuki.testkit")));

    /** Automatic modules, named in their manifests: their dependencies declare no module names (see their POMs). */
    private static final Set<String> AUTOMATIC = Set.of("kanuki-etcd", "kanuki-zookeeper", "kanuki-testkit",
            "kanuki-micrometer");

    /** Module → the packages it exports (explicit modules; an automatic module exports every package). */
    private static final Map<String, Set<String>> EXPORTS = Map.of(
            "dev.kanuki.core", Set.of("dev.kanuki", "dev.kanuki.spi"),
            "dev.kanuki.file", Set.of(),
            "dev.kanuki.sqlite", Set.of(),
            "dev.kanuki.jdbc", Set.of("dev.kanuki.jdbc"),
            "dev.kanuki.redis", Set.of(),
            "dev.kanuki.memcached", Set.of(),
            "dev.kanuki.servlet", Set.of("dev.kanuki.servlet"),
            "dev.kanuki.torture", Set.of("dev.kanuki.torture"));

    /** Modules that provide a backend factory. */
    private static final Set<String> BACKENDS = Set.of("dev.kanuki.core", "dev.kanuki.file", "dev.kanuki.sqlite",
            "dev.kanuki.jdbc", "dev.kanuki.redis", "dev.kanuki.memcached", "dev.kanuki.etcd", "dev.kanuki.zookeeper");

    /** A module line of {@code jar --describe-module}: {@code NAME@VERSION jar:file:...!/module-info.class} or {@code NAME@VERSION automatic}. */
    private static final Pattern MODULE_LINE = Pattern.compile("^([\\w.]+)(?:@\\S+)? (automatic|jar:\\S+module-info\\.class)$",
            Pattern.MULTILINE);

    @Test
    void everyLibraryJarIsAModuleWithItsName() throws IOException {
        assertEquals(MODULE_NAMES.keySet(), libraryJars().keySet(), "the library jars this module depends on");
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, Path> jar : libraryJars().entrySet()) {
            String description = describeModule(jar.getValue());
            Matcher line = MODULE_LINE.matcher(description);
            String expected = MODULE_NAMES.get(jar.getKey()) + (AUTOMATIC.contains(jar.getKey()) ? " automatic" : " explicit");
            String found = line.find() ? line.group(1) + (line.group(2).equals("automatic") ? " automatic" : " explicit")
                    : "no module line in: " + description;
            if (!expected.equals(found)) {
                wrong.add(jar.getKey() + ": expected " + expected + ", jar --describe-module says " + found);
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void backendsProvideTheirFactoryAndOnlyApiPackagesAreExported() throws IOException {
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, Path> jar : libraryJars().entrySet()) {
            ModuleDescriptor descriptor = ModuleFinder.of(jar.getValue()).findAll().iterator().next().descriptor();
            String name = descriptor.name();
            boolean provides = descriptor.provides().stream().anyMatch(p -> p.service().equals(FACTORY));
            if (provides != BACKENDS.contains(name)) {
                wrong.add(name + (provides ? " provides " : " does not provide ") + FACTORY);
            }
            if (!descriptor.isAutomatic()) {
                Set<String> exported = descriptor.exports().stream()
                        .map(e -> e.source() + (e.isQualified() ? " to " + e.targets() : ""))
                        .collect(Collectors.toCollection(TreeSet::new));
                if (!exported.equals(EXPORTS.get(name))) {
                    wrong.add(name + " exports " + exported + ", expected " + EXPORTS.get(name));
                }
                if (!descriptor.opens().isEmpty()) {
                    wrong.add(name + " opens " + descriptor.opens());
                }
            }
        }
        assertEquals(List.of(), wrong);
    }

    /** @return artifact → jar, from the library jars directory ({@code ARTIFACT.jar}) */
    private static Map<String, Path> libraryJars() throws IOException {
        try (Stream<Path> files = Files.list(SmokeBuild.libraryJars())) {
            Map<String, Path> jars = new TreeMap<>();
            files.filter(f -> f.getFileName().toString().endsWith(".jar"))
                    .forEach(f -> jars.put(f.getFileName().toString().replaceFirst("\\.jar$", ""), f));
            return jars;
        }
    }

    /** @return what {@code jar --describe-module --file JAR} prints */
    private static String describeModule(Path jar) {
        ToolProvider tool = ToolProvider.findFirst("jar").orElseThrow(() -> new IllegalStateException("no jar tool in this JDK"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = tool.run(new PrintWriter(out, true), new PrintWriter(err, true), "--describe-module", "--file", jar.toString());
        assertEquals(0, status, "jar --describe-module --file " + jar + ": " + err);
        return out.toString();
    }
}
