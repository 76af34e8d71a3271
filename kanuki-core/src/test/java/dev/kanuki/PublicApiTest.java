package dev.kanuki;

import java.nio.file.Path;
import java.util.List;
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
        ApiListing.assertMatchesFile(ApiListing.describe(LockProvider.class, EXPORTED), API_FILE, "kanuki-core");
    }
}
