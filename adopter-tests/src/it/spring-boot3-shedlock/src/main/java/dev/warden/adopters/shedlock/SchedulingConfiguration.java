package dev.warden.adopters.shedlock;

import dev.warden.lock.LockClient;
import dev.warden.shedlock.WardenLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.TaskDecorator;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import java.time.Clock;
import java.time.Duration;

/** @Scheduled on this host's clock, @SchedulerLock on Warden locks. */
@Configuration(proxyBeanMethods = false)
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "10s")
public class SchedulingConfiguration {

    /** ShedLock's locks are Warden locks from the starter's client (warden.lock.*). */
    @Bean
    LockProvider lockProvider(LockClient locks) {
        return new WardenLockProvider(locks);
    }

    /** This host's clock: the system clock, off by settlement.clock-offset (negative: a host whose clock is late). */
    @Bean
    Clock clock(@Value("${settlement.clock-offset:0s}") Duration offset) {
        return Clock.offset(Clock.systemUTC(), offset);
    }

    /** The scheduler @Scheduled runs on: its cron triggers read the host's clock. */
    @Bean
    ThreadPoolTaskScheduler taskScheduler(Clock clock, ObjectProvider<TaskDecorator> decorator) {
        ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
        scheduler.setClock(clock);
        scheduler.setThreadNamePrefix("settlement-");
        decorator.ifAvailable(scheduler::setTaskDecorator);
        return scheduler;
    }
}
