package dev.kanuki.servlet;

import dev.kanuki.ApiListing;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Pins the public API of {@code dev.kanuki.servlet} to {@code src/test/resources/api/kanuki-servlet.api}.
 * After a deliberate change, rewrite the file with
 * {@code mvn -pl kanuki-servlet verify -Dtest=PublicApiTest -Dkanuki.api.update=true} and commit it.
 */
class PublicApiTest {
    private static final Path API_FILE = Path.of("src", "test", "resources", "api", "kanuki-servlet.api");

    @Test
    void publicApiMatchesTheCommittedList() throws Exception {
        ApiListing.assertMatchesFile(ApiListing.describe(LockingFilter.class, List.of("dev.kanuki.servlet")),
                API_FILE, "kanuki-servlet");
    }
}
