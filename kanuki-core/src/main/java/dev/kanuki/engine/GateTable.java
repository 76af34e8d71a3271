package dev.kanuki.engine;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The JVM-wide table of gates, one per lock name per lock store. It is shared by all providers
 * so that two providers opened on the same store (same {@code scope}) still queue behind each
 * other instead of racing on the backend. Idle gates are kept for reuse, and dropped once the
 * table grows past {@link #KEEP_IDLE} entries, so a stream of unique names cannot leak memory.
 */
final class GateTable {
    static final GateTable JVM = new GateTable();
    private static final int KEEP_IDLE = 4096;

    private final ConcurrentHashMap<String, Gate> gates = new ConcurrentHashMap<>();

    Gate gate(String key) {
        Gate gate = gates.get(key);
        return gate != null ? gate : gates.computeIfAbsent(key, k -> new Gate(this, k));
    }

    /** Called by an idle gate with its monitor held; true when it was removed. */
    boolean retireIfCrowded(Gate gate) {
        return gates.size() > KEEP_IDLE && gates.remove(gate.key, gate);
    }

    int size() {
        return gates.size();
    }
}
