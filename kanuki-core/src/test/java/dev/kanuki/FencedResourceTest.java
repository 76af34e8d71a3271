package dev.kanuki;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.junit.jupiter.api.Test;

class FencedResourceTest {
    @Test
    void onlyAHigherTokenIsStored() {
        FencedResource<String> board = FencedResource.inMemory("board");
        assertTrue(board.read().isEmpty());
        board.write(3, "three");
        FencedWriteRefusedException e = assertThrows(FencedWriteRefusedException.class, () -> board.write(3, "again"));
        assertEquals(3, e.newerToken());
        assertEquals("board", e.resource());
        assertTrue(e.getMessage().contains("refused"), e.getMessage());
        assertThrows(FencedWriteRefusedException.class, () -> board.write(2, "two"));
        board.write(4, "four");
        assertEquals(new FencedResource.Fenced<>(4L, "four"), board.read().orElseThrow());
    }

    @Test
    void aStoreFailureIsABackendException() {
        FencedResource<String> broken = FencedResource.over("disk", (token, value) -> {
            throw new IOException("disk full");
        }, java.util.Optional::empty);
        LockBackendException e = assertThrows(LockBackendException.class, () -> broken.write(1, "x"));
        assertTrue(e.getMessage().contains("disk full"));
    }
}
