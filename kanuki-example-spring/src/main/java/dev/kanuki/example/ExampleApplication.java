package dev.kanuki.example;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * The example application: a Spring Boot web application on kanuki-spring-boot-starter, meant to
 * run as several instances sharing one lock store ({@code kanuki.uri}). It shows a scheduled job
 * that runs once per tick across the instances ({@link TickJob}), an order endpoint whose
 * idempotency key is locked ({@link OrderController}), a leader task ({@link ExampleLeader}) and
 * the actuator's health, {@code locks} endpoint and lock metrics.
 */
@SpringBootApplication
@EnableScheduling
public class ExampleApplication {

    /** Made by Spring. */
    public ExampleApplication() {
    }

    /**
     * Starts an instance.
     *
     * @param args Spring Boot's arguments, e.g. {@code --server.port=8081 --kanuki.uri=redis://127.0.0.1:6379}
     */
    public static void main(String[] args) {
        SpringApplication.run(ExampleApplication.class, args);
    }
}
