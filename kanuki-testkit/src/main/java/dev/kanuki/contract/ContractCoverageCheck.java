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

    /** For the subclass in a backend module's tests; the same as the constructor Java would add. */
    public ContractCoverageCheck() {
    }

    @Test
    void everyBackendOfThisModuleHasAContractTest() throws Exception {
        Path testClasses = location(getClass());
        Set<String> covered = coveredSchemes(testClasses);
        Set<String> missing = new TreeSet<>();
        Set<String> registered = new HashSet<>();
        for (LockBackendFactory factory : ServiceLoader.load(LockBackendFactory.class)) {
            if (!checks(factory, testClasses)) {
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

    /**
     * The variants of a scheme that work differently enough to need a contract test each: a
     * module with such a backend overrides this with the list its code accepts (not a copy kept
     * by hand), so that a new variant without a contract test fails the build.
     *
     * @return for each scheme, the variants that need a test ({@code key=value} forms, as in
     *     {@link ContractFor#variants()})
     */
    protected java.util.Map<String, Set<String>> requiredVariants() {
        return java.util.Map.of();
    }

    @Test
    void everyVariantOfThisModuleHasAContractTest() throws Exception {
        java.util.Map<String, Set<String>> required = requiredVariants();
        Set<String> covered = new HashSet<>();
        for (Class<?> type : contractTests(location(getClass()))) {
            ContractFor contractFor = type.getAnnotation(ContractFor.class);
            for (String scheme : contractFor.value()) {
                for (String variant : contractFor.variants()) {
                    covered.add(scheme + "?" + variant);
                }
            }
        }
        Set<String> missing = new TreeSet<>();
        required.forEach((scheme, variants) -> variants.forEach(v -> {
            if (!covered.contains(scheme + "?" + v)) {
                missing.add(scheme + "?" + v);
            }
        }));
        assertTrue(missing.isEmpty(), "backend variants without a contract test (a class extending"
                + " LockProviderContract annotated @ContractFor(value = \"scheme\", variants = \"key=value\")): "
                + missing);
    }

    /**
     * Whether this check answers for a backend. By default it answers for the factories of the
     * module the test belongs to (its main classes sit beside its test classes); a module that
     * tests backends built elsewhere overrides this to name them.
     *
     * @param factory a factory found through {@link ServiceLoader}
     * @param testClasses the directory of this module's test classes, searched for contract tests
     * @return true when {@code testClasses} must hold a contract test for each of the factory's schemes
     * @throws URISyntaxException when the factory's class location cannot be read
     */
    protected boolean checks(LockBackendFactory factory, Path testClasses) throws URISyntaxException {
        return sameModule(location(factory.getClass()), testClasses);
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
        for (Class<?> type : contractTests(testClasses)) {
            schemes.addAll(List.of(type.getAnnotation(ContractFor.class).value()));
        }
        return schemes;
    }

    /** {@return the concrete contract tests among this module's test classes} */
    private List<Class<?>> contractTests(Path testClasses) throws Exception {
        List<Class<?>> tests = new java.util.ArrayList<>();
        List<Path> classFiles;
        try (Stream<Path> walk = Files.walk(testClasses)) {
            classFiles = walk.filter(p -> p.toString().endsWith(".class") && !p.toString().contains("$")).toList();
        }
        for (Path file : classFiles) {
            String name = testClasses.relativize(file).toString().replace('/', '.').replaceAll("\\.class$", "");
            Class<?> type = Class.forName(name, false, getClass().getClassLoader());
            ContractFor contractFor = type.getAnnotation(ContractFor.class);
            if (contractFor != null && LockProviderContract.class.isAssignableFrom(type)) {
                tests.add(type);
            }
        }
        return tests;
    }
}
