import { CliCommand } from '../util/cli-command.js';
import { doctor, formatDoctor, type DoctorReport } from '../doctor/doctor.js';

export default class Doctor extends CliCommand {
  static override description =
    'What this machine and user can run: each target on each runtime and each election backend, and for what cannot, why and how to fix it; what needs root';

  static override enableJsonFlag = true;

  static override examples = ['<%= config.bin %> doctor', '<%= config.bin %> doctor --json'];

  async run(): Promise<DoctorReport> {
    await this.parse(Doctor);
    const report = await doctor(this.config.version);
    if (!this.jsonEnabled()) this.log(formatDoctor(report));
    return report;
  }
}
