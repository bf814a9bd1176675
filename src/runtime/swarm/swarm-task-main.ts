// The swarm runtime's services' entry point in the node image (`node …/swarm-task-main.js ROLE`):
// straight to the task, without the CLI around it, whose start-up would be CPU the node's
// members wait for.
import { TASK_ROLES, type TaskRole } from './swarm-plan.js';
import { serveSwarmTask } from './swarm-task.js';

const role = process.argv[2];
if (!TASK_ROLES.includes(role as TaskRole)) {
  process.stderr.write(`swarm-task: ROLE must be one of ${TASK_ROLES.join(', ')}, not ${role ?? 'none'}\n`);
  process.exit(2);
}
process.exit(await serveSwarmTask(role as TaskRole));
