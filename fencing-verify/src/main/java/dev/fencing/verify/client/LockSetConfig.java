package dev.fencing.verify.client;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;

/**
 * The lock-set workload's beans: the set rows (fenced for reads and writes, for writes only, or plain, as
 * {@link ClientSettings} says), the {@link LockSetService} over them, and its {@link WorkloadDriver}, which adds
 * the operation's unique element to the set of the resource it picked.
 */
@Configuration(proxyBeanMethods = false)
public class LockSetConfig {

    @Bean
    SetRows setRows(DataSource dataSource, ClientSettings settings) {
        JdbcSetRows plain = new JdbcSetRows(new JdbcTemplate(dataSource), settings.setTable());
        if (!settings.fence()) {
            return plain;
        }
        return settings.fenceReads() ? new FencedSetRows(plain) : new FencedSetRows.WritesOnly(plain);
    }

    @Bean
    LockSetService lockSetService(SetRows setRows, ClientSettings settings) {
        return new LockSetService(setRows, settings.maxSleep().toMillis());
    }

    @Bean
    WorkloadDriver lockSetDriver(LockSetService service) {
        return new Driver(service);
    }

    /** {@code add element} to the set of resource {@code row}. */
    record Driver(LockSetService service) implements WorkloadDriver {
        @Override
        public String f() {
            return "add";
        }

        @Override
        public String base() {
            return ClientMain.RESOURCE;
        }

        @Override
        public Object invokeValue(long element) {
            return element;
        }

        @Override
        public Object run(int row, long element, long opIndex, Steps steps) throws Exception {
            service.add(row, element, steps);
            return element;
        }
    }
}
