package dev.fencing.it.boot.testing;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * An application as its team tests it (the tests beside it): a Spring Data JDBC repository with {@code @Fenced}
 * writes, a service that takes the lock, a controller. Boot's test slices find this class by its package.
 */
@SpringBootApplication
public class TestedApplication {
}
