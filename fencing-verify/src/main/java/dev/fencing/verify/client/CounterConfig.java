package dev.fencing.verify.client;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;

/**
 * The counter workload's beans: the counter rows (fenced or plain, as {@link ClientSettings} says), the
 * {@link CounterService} over them, and its {@link WorkloadDriver}, which increments the counter of the resource it
 * picked and records the value written.
 */
@Configuration(proxyBeanMethods = false)
public class CounterConfig {

    @Bean
    CounterRows counterRows(DataSource dataSource, ClientSettings settings) {
        JdbcCounterRows plain = new JdbcCounterRows(new JdbcTemplate(dataSource), settings.setTable());
        if (!settings.fence()) {
            return plain;
        }
        return settings.fenceReads() ? new FencedCounterRows(plain) : new FencedCounterRows.WritesOnly(plain);
    }

    @Bean
    CounterService counterService(CounterRows rows, ClientSettings settings) {
        return new CounterService(rows, settings.maxSleep().toMillis());
    }

    @Bean
    WorkloadDriver counterDriver(CounterService service) {
        return new Driver(service);
    }

    /** {@code increment} the counter of resource {@code row}. */
    record Driver(CounterService service) implements WorkloadDriver {
        @Override
        public String f() {
            return "increment";
        }

        @Override
        public String base() {
            return CounterService.RESOURCE;
        }

        @Override
        public Object invokeValue(long element) {
            return null;
        }

        @Override
        public Object run(int row, long element, long opIndex, Steps steps) throws Exception {
            return service.increment(row, steps);
        }
    }
}
