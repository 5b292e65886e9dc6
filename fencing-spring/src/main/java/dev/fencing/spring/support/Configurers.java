package dev.fencing.spring.support;

import dev.fencing.mode.FenceMode;
import dev.fencing.spring.FencingConfigurer;
import org.springframework.beans.factory.ObjectProvider;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Every {@link FencingConfigurer} bean of the context as one, those with {@link FencingConfigurer#explicitSettings()}
 * first, then in their order ({@code @Order}, {@code Ordered}):
 * each setting is the first non-null answer, and the per-resource modes are merged, the first configurer that names
 * a resource deciding it. None ignores another: with two beans, a lookup of the unique one found none, and the
 * starter's properties went unread beside an application's configurer.
 */
final class Configurers implements FencingConfigurer {

    private final List<FencingConfigurer> ordered;

    private Configurers(List<FencingConfigurer> ordered) {
        this.ordered = ordered;
    }

    /** The context's configurers, read now (on first use, when the singletons exist). */
    static FencingConfigurer of(ObjectProvider<FencingConfigurer> configurers) {
        List<FencingConfigurer> ordered = new java.util.ArrayList<>(configurers.orderedStream().toList());
        // explicit settings (the starter's properties set) first, whatever another configurer's order says
        ordered.sort(java.util.Comparator.comparing(configurer -> !configurer.explicitSettings()));
        return new Configurers(List.copyOf(ordered));
    }

    private <T> T first(Function<FencingConfigurer, T> setting) {
        for (FencingConfigurer configurer : ordered) {
            T answer = setting.apply(configurer);
            if (answer != null) {
                return answer;
            }
        }
        return null;
    }

    @Override
    public Duration acquireTimeout() {
        return first(FencingConfigurer::acquireTimeout);
    }

    @Override
    public String missingStoreMessage() {
        return first(FencingConfigurer::missingStoreMessage);
    }

    @Override
    public Boolean singleInstance() {
        return first(FencingConfigurer::singleInstance);
    }

    @Override
    public String settingOf(String beanName) {
        return first(configurer -> configurer.settingOf(beanName));
    }

    @Override
    public String sharedStoreAdvice(boolean reactive) {
        return first(configurer -> configurer.sharedStoreAdvice(reactive));
    }

    @Override
    public FenceMode defaultFenceMode() {
        return first(FencingConfigurer::defaultFenceMode);
    }

    @Override
    public Map<String, FenceMode> fenceModes() {
        Map<String, FenceMode> modes = new LinkedHashMap<>();
        for (FencingConfigurer configurer : ordered) {
            Map<String, FenceMode> own = configurer.fenceModes();
            if (own != null) {
                own.forEach(modes::putIfAbsent);
            }
        }
        return modes;
    }
}
