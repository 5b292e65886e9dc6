package dev.fencing.example;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Accounts and transfers, fenced. There is no fencing configuration code in this application: the starter reads
 * {@code fencing.*} from application.yml, puts the fence store and the lease issuer on the application's
 * {@code DataSource}, and Flyway creates their tables ({@code db/migration/V1__accounts.sql}).
 */
@SpringBootApplication
public class ExampleApplication {

    public static void main(String[] args) {
        SpringApplication.run(ExampleApplication.class, args);
    }
}
