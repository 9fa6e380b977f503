<?php /* install.php */ ?>
