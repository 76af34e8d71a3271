package dev.kanuki.example;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code GET /leader}: whether this instance leads, and its epoch. */
@RestController
public class LeaderController {
    private final ExampleLeader leader;
    private final long pid = ProcessHandle.current().pid();

    /**
     * Makes the controller.
     *
     * @param leader the leader task
     */
    public LeaderController(ExampleLeader leader) {
        this.leader = leader;
    }

    /** {@return {@code leader} (true or false), {@code epoch} while leading, and {@code pid}} */
    @GetMapping("/leader")
    public Map<String, Object> leader() {
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("pid", pid);
        leader.current().ifPresentOrElse(term -> {
            answer.put("leader", true);
            answer.put("epoch", term.epoch());
        }, () -> answer.put("leader", false));
        return answer;
    }
}
