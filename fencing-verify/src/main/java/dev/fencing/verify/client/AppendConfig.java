package dev.fencing.verify.client;

import dev.fencing.verify.workload.Resources;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import javax.sql.DataSource;

/**
 * The append workload's beans: the log (fenced or plain, as {@link ClientSettings} says), the
 * {@link AppendService} over it, and its {@link WorkloadDriver}, which appends one row to the log of the resource it
 * picked.
 */
@Configuration(proxyBeanMethods = false)
public class AppendConfig {

    @Bean
    AppendRows appendRows(DataSource dataSource, ClientSettings settings) {
        JdbcAppendRows plain = new JdbcAppendRows(new JdbcTemplate(dataSource), settings.setTable());
        return settings.fence() ? new FencedAppendRows(plain) : plain;
    }

    @Bean
    AppendService appendService(AppendRows rows, ClientSettings settings) {
        return new AppendService(rows, settings.maxSleep().toMillis());
    }

    @Bean
    WorkloadDriver appendDriver(AppendService service, ClientSettings settings) {
        return new Driver(service, settings);
    }

    /** {@code append} one row to the log of resource {@code row}. */
    record Driver(AppendService service, ClientSettings settings) implements WorkloadDriver {
        @Override
        public String f() {
            return "append";
        }

        @Override
        public String base() {
            return AppendService.RESOURCE;
        }

        @Override
        public Object invokeValue(long element) {
            return null;
        }

        @Override
        public Object run(int row, long element, long opIndex, Steps steps) throws Exception {
            service.append(row, Resources.name(base(), row, settings.resources()), settings.process(), opIndex, steps);
            return null;
        }
    }
}
