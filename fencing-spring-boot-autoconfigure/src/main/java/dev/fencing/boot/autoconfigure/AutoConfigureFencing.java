package dev.fencing.boot.autoconfigure;

import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Adds what the starter configures for {@code @Fenced} beans (the fence and its store, the issuers, signing, the HTTP
 * answers, the token filter and the carriers) to a Spring Boot test slice that leaves it out, such as
 * {@code @WebMvcTest} with a real fenced bean. The repository slices ({@code @JdbcTest}, {@code @DataJdbcTest},
 * {@code @DataJpaTest}, {@code @DataR2dbcTest}) include the fence already, and the web slices the HTTP answers and
 * the token filter; the actuator, the scheduled compaction, AMQP and ShedLock are never added.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
public @interface AutoConfigureFencing {
}
