package dev.kanuki.zookeeper;

import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Optional;
import org.apache.zookeeper.data.Stat;

/**
 * The data of a kanuki node (a lock node, a permit node, a place in a wait queue): the owner
 * record, tab-separated: owner id, host, pid, acquisition time (ms), the lock's real name.
 */
final class OwnerRecord {
    private OwnerRecord() {
    }

    static byte[] encode(OwnerInfo owner, String name) {
        return (owner.id() + "\t" + owner.host() + "\t" + owner.pid() + "\t" + owner.acquiredAt().toEpochMilli()
                + "\t" + name).getBytes(StandardCharsets.UTF_8);
    }

    /** {@return the lock's name in a record, or null for a foreign node} */
    static String decodeName(byte[] data) {
        String[] f = fields(data);
        return f.length == 5 ? f[4] : null;
    }

    /** {@return the status of a held lock whose node has this data and stat} */
    static LockStatus statusOf(String name, LockStatus.State state, byte[] data, Stat stat) {
        String[] f = fields(data);
        Optional<OwnerInfo> owner = Optional.empty();
        if (f.length == 5) {
            try {
                owner = Optional.of(new OwnerInfo(f[1], Long.parseLong(f[2]), f[0],
                        Instant.ofEpochMilli(Long.parseLong(f[3])), null));
            } catch (RuntimeException e) {
                owner = Optional.empty(); // a foreign node: held by someone unknown
            }
        }
        return new LockStatus(name, state, owner, stat.getCzxid());
    }

    private static String[] fields(byte[] data) {
        return new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8).split("\t", 5);
    }
}
