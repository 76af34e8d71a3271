package dev.kanuki.contract;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.spi.LockBackendFactory;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The meta-test: fails when a backend registered through {@link ServiceLoader} by this module
 * has no contract test in this module. Every backend module has a test that extends it.
 */
public abstract class ContractCoverageCheck {

    @Test
    void everyBackendOfThisModuleHasAContractTest() throws Exception {
        Path testClasses = location(getClass());
        Set<String> covered = coveredSchemes(testClasses);
        Set<String> missing = new TreeSet<>();
        Set<String> registered = new HashSet<>();
        for (LockBackendFactory factory : ServiceLoader.load(LockBackendFactory.class)) {
            if (!sameModule(location(factory.getClass()), testClasses)) {
                continue;
            }
            for (String scheme : factory.schemes()) {
                registered.add(scheme);
                if (!covered.contains(scheme)) {
                    missing.add(scheme);
                }
            }
        }
        assertTrue(!registered.isEmpty(), "this module registers no backend, so it needs no coverage check");
        assertTrue(missing.isEmpty(), "backends without a contract test (a class extending LockProviderContract"
                + " annotated @ContractFor(\"scheme\")): " + missing);
    }

    private static Path location(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /** target/classes and target/test-classes of one module share their parent. */
    private static boolean sameModule(Path mainClasses, Path testClasses) {
        return mainClasses.getParent() != null && mainClasses.getParent().equals(testClasses.getParent());
    }

    private Set<String> coveredSchemes(Path testClasses) throws Exception {
        Set<String> schemes = new HashSet<>();
        List<Path> classFiles;
        try (Stream<Path> walk = Files.walk(testClasses)) {
            classFiles = walk.filter(p -> p.toString().endsWith(".class") && !p.toString().contains("$")).toList();
        }
        for (Path file : classFiles) {
            String name = testClasses.relativize(file).toString().replace('/', '.').replaceAll("\\.class$", "");
            Class<?> type = Class.forName(name, false, getClass().getClassLoader());
            ContractFor contractFor = type.getAnnotation(ContractFor.class);
            if (contractFor != null && LockProviderContract.class.isAssignableFrom(type)) {
                schemes.addAll(java.util.List.of(contractFor.value()));
            }
        }
        return schemes;
    }
}
