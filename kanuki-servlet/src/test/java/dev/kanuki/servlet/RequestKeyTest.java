package dev.kanuki.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockNames;
import org.junit.jupiter.api.Test;

/** Lock names from request keys, and the {@code kanuki.key} forms. */
class RequestKeyTest {
    @Test
    void shortKeysAreReadableAndLongOrInvalidOnesAreHashed() {
        assertEquals("shop header:K=1", LockingFilter.lockName("shop", "header:K=1"));
        String longKey = "header:K=" + "x".repeat(5000);
        String hashed = LockingFilter.lockName("shop", longKey);
        assertTrue(hashed.startsWith("shop #") && hashed.length() < 100, hashed);
        assertNotEquals(hashed, LockingFilter.lockName("shop", longKey + "y"));
        String withNul = LockingFilter.lockName("shop", "header:K=a\u0000b");
        assertEquals(withNul, LockNames.validate(withNul));
    }

    @Test
    void theSessionKeyHoldsAHashNotTheSecretId() {
        jakarta.servlet.http.HttpSession session = proxy(jakarta.servlet.http.HttpSession.class,
                (method, args) -> method.equals("getId") ? "node0secret42" : null);
        jakarta.servlet.http.HttpServletRequest request = proxy(jakarta.servlet.http.HttpServletRequest.class,
                (method, args) -> method.equals("getSession") ? session : null);
        String key = RequestKey.session().of(request);
        assertTrue(key.startsWith("session:") && !key.contains("secret"), key);
        assertEquals(key, RequestKey.session().of(request));
    }

    private static <T> T proxy(Class<T> type, java.util.function.BiFunction<String, Object[], Object> answer) {
        return type.cast(java.lang.reflect.Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (p, method, args) -> answer.apply(method.getName(), args)));
    }

    @Test
    void everyDocumentedFormParses() {
        for (String spec : new String[] {"session", "user", "param:token", "header:Idempotency-Key", "path:^/t/([^/]+)",
            "class:" + FixedKey.class.getName()}) {
            RequestKey.parse(spec);
        }
        assertThrows(IllegalArgumentException.class, () -> RequestKey.parse("cookie:x"));
        assertThrows(IllegalArgumentException.class, () -> RequestKey.parse("header:"));
        assertThrows(IllegalArgumentException.class, () -> RequestKey.parse("class:java.lang.String"));
    }

    @Test
    void theBuilderRefusesWhatCannotWork() {
        assertThrows(IllegalArgumentException.class, () -> LockingFilter.builder("mem:").build());
        assertThrows(IllegalArgumentException.class,
                () -> LockingFilter.builder("mem:").key(RequestKey.user()).timeoutStatus(500).build());
    }

    /** A key class as {@code kanuki.key=class:NAME} names it. */
    public static final class FixedKey implements RequestKey {
        @Override
        public String of(jakarta.servlet.http.HttpServletRequest request) {
            return "fixed";
        }
    }
}
