package dev.kanuki.example;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.stereotype.Component;

/**
 * Writes the HTTP port to {@code example.port-file} once the server listens, when that property is
 * set: with {@code server.port=0} (a free port) a script or a test learns where the instance is.
 */
@Component
public class PortFileWriter implements ApplicationListener<WebServerInitializedEvent> {
    private final String portFile;

    /**
     * Makes the listener.
     *
     * @param portFile the file to write, or empty for none
     */
    public PortFileWriter(@Value("${example.port-file:}") String portFile) {
        this.portFile = portFile;
    }

    @Override
    public void onApplicationEvent(WebServerInitializedEvent event) {
        if (portFile.isBlank()) {
            return;
        }
        Path target = Path.of(portFile).toAbsolutePath();
        try {
            // written beside and renamed, so that a reader never sees a half-written number
            Path temp = Files.createTempFile(target.getParent(), ".port-", ".tmp");
            Files.writeString(temp, Integer.toString(event.getWebServer().getPort()), StandardCharsets.UTF_8);
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the port to " + target, e);
        }
    }
}
