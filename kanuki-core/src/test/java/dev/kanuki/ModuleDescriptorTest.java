package dev.kanuki;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/** The core module exports the API and the SPI, nothing else: the engine is not public API. */
class ModuleDescriptorTest {
    @Test
    void exportsOnlyTheApiAndTheSpi() throws IOException, URISyntaxException {
        ModuleDescriptor descriptor = coreDescriptor();
        Set<String> exported = new TreeSet<>();
        for (ModuleDescriptor.Exports export : descriptor.exports()) {
            exported.add(export.source() + (export.isQualified() ? " to " + export.targets() : ""));
        }
        assertEquals(Set.of("dev.kanuki", "dev.kanuki.spi"), exported,
                "kanuki-core's module-info.java exports only dev.kanuki and dev.kanuki.spi; other modules reach"
                        + " the engine through dev.kanuki.spi.BackendProviders");
        assertEquals(Set.of(), descriptor.opens(), "kanuki-core opens no package");
    }

    @Test
    void providesTheMemoryBackendThroughTheServiceLoader() throws IOException, URISyntaxException {
        ModuleDescriptor descriptor = coreDescriptor();
        assertEquals(Set.of("dev.kanuki.spi.LockBackendFactory"), descriptor.uses());
        assertEquals(1, descriptor.provides().size());
    }

    /** Reads the compiled descriptor beside the core classes (tests run on the class path). */
    private static ModuleDescriptor coreDescriptor() throws IOException, URISyntaxException {
        Path location = Path.of(LockProvider.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        if (Files.isDirectory(location)) {
            try (InputStream in = Files.newInputStream(location.resolve("module-info.class"))) {
                return ModuleDescriptor.read(in);
            }
        }
        try (JarFile jar = new JarFile(location.toFile());
             InputStream in = jar.getInputStream(jar.getEntry("module-info.class"))) {
            return ModuleDescriptor.read(in);
        }
    }
}
