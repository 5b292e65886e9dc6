package dev.fencing.it.weavingfaults;

import dev.fencing.spring.EnableFencing;
import org.springframework.context.annotation.AdviceMode;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * An ASPECTJ context with beans whose annotations weaving cannot see: its startup fails. In a package of its own, with
 * the classes that make it fail, so that the startup check of the contracts' other contexts does not read them.
 */
@Configuration
@EnableFencing(mode = AdviceMode.ASPECTJ, allowInMemoryStore = true)
public class InvisibleConfig {
    @Bean
    InterfaceAnnotatedRepositoryImpl repository() {
        return new InterfaceAnnotatedRepositoryImpl();
    }

    @Bean
    WovenJournal journal() {
        return new WovenJournal();
    }
}
